import type { PipeTransform } from '@nestjs/common';
import { checkWith, CommonErrorCode, type Schema, type SchemaCheck } from '@bns/contracts';
import { AppError } from '@bns/service-kit';

type Refusal = Extract<SchemaCheck<unknown>, { ok: false }>;

/**
 * Validates a body or query with its contracts schema and hands the controller the typed value. A
 * refusal is a 400 with the schema's words; `refusal` lets a call word it as its service would (the
 * same code and message the owning service answers for the same input).
 */
export class SchemaPipe<T> implements PipeTransform<unknown, T> {
  constructor(
    private readonly schema: Schema<T>,
    private readonly refusal: (r: Refusal) => AppError = (r) =>
      AppError.validation(CommonErrorCode.BadRequest, r.message, r.errors),
  ) {}

  transform(value: unknown): T {
    const checked = checkWith(this.schema, value);
    if (!checked.ok) throw this.refusal(checked);
    return checked.value;
  }
}
