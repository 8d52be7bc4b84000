import { ACCOUNT_MESSAGES, displayedPhoneDigits, SETTINGS_MESSAGES } from '@bns/contracts';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { selectConnection } from '../connection/slice.js';
import { settingsSectionSelected, tabSelected } from '../ui/slice.js';
import { AuditLogTable } from './AuditLogTable.js';
import { DeleteAccount } from './DeleteAccount.js';
import { RetentionField } from './RetentionField.js';
import { TakeoutButton } from './TakeoutButton.js';

/**
 * Account & data: who is signed in, the WhatsApp link, where each kind of data can be taken out, how long
 * campaign details are kept, the whole take-out, the audit log and deleting the account.
 */
export function AccountDataSection() {
  const dispatch = useAppDispatch();
  const session = useAppSelector((s) => s.session);
  const connection = useAppSelector(selectConnection);
  const linked = connection.status === 'connected';
  return (
    <section className="card" aria-labelledby="account-title">
      <h2 id="account-title">Account &amp; data</h2>
      <dl className="account-facts">
        <dt>Signed in as</dt>
        <dd>{session.email}</dd>
        {session.firstName && (
          <>
            <dt>Name</dt>
            <dd>{session.firstName}</dd>
          </>
        )}
        <dt>WhatsApp</dt>
        <dd>
          {linked ? (
            <>Linked{connection.phoneNumber ? ` (${displayedPhoneDigits(connection.phoneNumber)})` : ''}</>
          ) : (
            <>
              {SETTINGS_MESSAGES.notLinked}{' '}
              <button type="button" className="button link small" onClick={() => dispatch(tabSelected('send'))}>
                {SETTINGS_MESSAGES.linkInSend}
              </button>
            </>
          )}
        </dd>
      </dl>
      <h3>Your data</h3>
      <ul className="plain-list data-list">
        <li>
          {SETTINGS_MESSAGES.reportsData}{' '}
          <button type="button" className="button link small" onClick={() => dispatch(tabSelected('campaigns'))}>
            Campaigns
          </button>
        </li>
        <li>
          {SETTINGS_MESSAGES.optOutsData}{' '}
          <button
            type="button"
            className="button link small"
            onClick={() => dispatch(settingsSectionSelected('optouts'))}
          >
            Opt-outs
          </button>
        </li>
        <li>{SETTINGS_MESSAGES.signOutData}</li>
      </ul>
      <RetentionField />
      <TakeoutButton />
      <h3>{ACCOUNT_MESSAGES.auditTitle}</h3>
      <AuditLogTable />
      <h3>{ACCOUNT_MESSAGES.deleteTitle}</h3>
      <DeleteAccount />
    </section>
  );
}
