import { ACCOUNT_LIMITS, type RetentionPage } from '@bns/contracts';
import type { RpcClient } from '../nats/rpc-client.js';

/**
 * Reads every stored retention setting from the integrations service (their one home), a page at a
 * time, handing each page to `save` (the owner's own copy) before asking for the next. An owner calls
 * it before each purge and purges nothing when it fails: a user's "keep" must never be read as the default.
 */
export async function syncRetentionSettings(
  rpc: RpcClient,
  save: (settings: RetentionPage['settings']) => Promise<void>,
): Promise<void> {
  let after: string | undefined;
  do {
    const page = await rpc.call('integrations.account.retention.page', {
      ...(after === undefined ? {} : { after }),
      limit: ACCOUNT_LIMITS.retentionPageMax,
    });
    await save(page.settings);
    after = page.next ?? undefined;
  } while (after !== undefined);
}
