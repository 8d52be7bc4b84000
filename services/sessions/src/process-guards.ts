import { Logger } from '@nestjs/common';
import { safeError } from './redact.js';

/**
 * whatsapp-web.js leaves promises unawaited (`afterAuthReady`, RemoteAuth's backup timer, the
 * `framenavigated` handler that re-injects after a phone-side logout, whatsapp-web.js #3676). Without a handler
 * Node ends the process on the first such rejection, and every account on the shard drops with it.
 * This handler logs the rejection (kind and digit-masked message only) and the shard keeps serving;
 * the user whose browser broke is handled by that engine's own events and deadlines.
 */
export class UnhandledRejectionGuard {
  private readonly logger = new Logger('Process');
  /** Rejections seen since install (tests and metrics read it). */
  seen = 0;
  private readonly handler = (reason: unknown) => {
    this.seen += 1;
    this.logger.error({ err: safeError(reason) }, 'unhandled promise rejection in a library; the shard keeps serving');
  };

  install(): this {
    process.on('unhandledRejection', this.handler);
    return this;
  }

  uninstall(): void {
    process.off('unhandledRejection', this.handler);
  }
}
