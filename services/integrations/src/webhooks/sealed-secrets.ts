import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { SERVICE_ENV } from '@bns/service-kit';
import type { IntegrationsEnv } from '../config/env.js';
import { integrationsSecretBox, KEY_CHECK_PLAINTEXT, SecretBox, SecretKeyMismatchError } from './secret-box.js';
import { WebhooksRepository } from './webhooks.repository.js';

/** What the service says when INTEGRATIONS_SECRET_KEY is not the key the stored secrets were sealed with. */
export const WRONG_SECRET_KEY =
  'INTEGRATIONS_SECRET_KEY is not the key the stored webhook secrets were sealed with: start with the original key (a lost key means every endpoint needs a new secret)';

/**
 * The webhook signing secrets, sealed at rest under INTEGRATIONS_SECRET_KEY (SecretBox). At start it
 * opens the key check row, so a wrong key stops the service with WRONG_SECRET_KEY before it serves
 * anything, and it seals any secret still stored in plain text (written before sealing existed).
 */
@Injectable()
export class SealedSecrets implements OnModuleInit {
  private readonly logger = new Logger('SealedSecrets');
  private readonly box: SecretBox;

  constructor(
    private readonly webhooks: WebhooksRepository,
    @Inject(SERVICE_ENV) env: Pick<IntegrationsEnv, 'INTEGRATIONS_SECRET_KEY'>,
  ) {
    this.box = integrationsSecretBox(env.INTEGRATIONS_SECRET_KEY);
  }

  async onModuleInit(): Promise<void> {
    const check = await this.webhooks.keyCheck(this.box.seal(KEY_CHECK_PLAINTEXT));
    let opened: string | undefined;
    try {
      opened = this.box.open(check);
    } catch (err) {
      if (!(err instanceof SecretKeyMismatchError)) throw err;
    }
    if (opened !== KEY_CHECK_PLAINTEXT) throw new Error(WRONG_SECRET_KEY);
    const plain = await this.webhooks.plainSecrets();
    for (const e of plain) {
      const sealed = {
        secret: SecretBox.isSealed(e.secret) ? e.secret : this.box.seal(e.secret),
        previous_secret:
          e.previous_secret === null || SecretBox.isSealed(e.previous_secret)
            ? e.previous_secret
            : this.box.seal(e.previous_secret),
      };
      await this.webhooks.sealSecrets(e.id, e, sealed);
    }
    if (plain.length > 0) this.logger.log({ endpoints: plain.length }, 'sealed webhook secrets stored in plain text');
  }

  seal(plain: string): string {
    return this.box.seal(plain);
  }

  open(sealed: string): string {
    return this.box.open(sealed);
  }
}
