import { z } from '@bns/contracts';

/** What every refusal looks like (service-kit AppErrorFilter). */
export const ErrorAnswerSchema = z.object({
  success: z.literal(false),
  error: z.string().meta({ example: 'Please fix the form errors' }),
  code: z.string().meta({ example: 'TEMPLATE_INVALID' }),
  errors: z.record(z.string(), z.string()).optional().meta({ description: 'Field → message' }),
  errorId: z.string().optional().meta({ description: 'Set on 500s: the id under which the cause was logged' }),
});

export const SuccessAnswerSchema = z.object({ success: z.literal(true) });
