import { applyDecorators, UsePipes, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { checkRequest, type RequestKey, type RequestOf } from '@bns/contracts';
import { AppError } from '../errors/app-error.js';

/**
 * Checks an incoming NATS request against its key's schema (`REQUEST_SCHEMAS`) and hands the handler
 * the parsed request. A refusal is a validation error naming the field in plain words (never the
 * value), which AppErrorFilter sends back as the reply.
 */
export class RpcRequestPipe<K extends RequestKey> implements PipeTransform<unknown, RequestOf<K>> {
  constructor(readonly key: K) {}

  transform(value: unknown, metadata: ArgumentMetadata): RequestOf<K> {
    // Nest hands pipes the `@Payload()` argument as 'body'; any other (a `@Ctx()`, 'custom') is not the request.
    if (metadata.type !== 'body') return value as RequestOf<K>;
    const check = checkRequest(this.key, value);
    if (!check.ok) throw AppError.validation(check.code, check.message, check.errors);
    return check.value;
  }
}

/**
 * A NATS request handler: `@Rpc('jobs.status') status(@Payload() req: RequestOf<'jobs.status'>)`. It
 * listens on the key (sessions keys on their shard's subject, see KitNatsServer) and validates the
 * `@Payload()` with the key's schema before the handler runs.
 */
export function Rpc(key: RequestKey): MethodDecorator {
  return applyDecorators(MessagePattern(key), UsePipes(new RpcRequestPipe(key)));
}
