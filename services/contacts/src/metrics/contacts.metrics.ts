import { Injectable } from '@nestjs/common';
import { counter, histogram } from '@bns/service-kit';

/** Contact book metrics. Labels never name a user, a number or a segment. */
const importedRows = counter({ name: 'bns_contacts_imported_rows_total', help: 'Rows written by imports (merged)' });
const importSeconds = histogram({
  name: 'bns_contacts_import_duration_seconds',
  help: 'Time of one import, from the request to its commit',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
});
const factEvents = counter({
  name: 'bns_contacts_fact_events_total',
  help: 'Message events folded into facts and the inbox, by kind',
  labelNames: ['kind'],
});

@Injectable()
export class ContactsMetrics {
  imported(rows: number, ms: number): void {
    importedRows.inc(rows);
    importSeconds.observe(ms / 1000);
  }

  folded(kind: 'sent' | 'delivered' | 'read' | 'failed' | 'replied' | 'opted_out', n = 1): void {
    factEvents.inc({ kind }, n);
  }
}
