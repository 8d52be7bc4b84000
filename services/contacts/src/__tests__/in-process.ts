import type { Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { openDatabase, Transactions } from '@bns/service-kit';
import { inProcessModule, type InProcess } from '@bns/testing';
import { CONTACTS_DATABASE } from '../database/data-source.js';

export type { InProcess };

/** The contacts service's providers in-process against a real, freshly migrated Postgres (no NATS, no build). */
export function inProcess(providers: Provider[]): Promise<InProcess> {
  return inProcessModule(
    (url) => openDatabase({ url, ...CONTACTS_DATABASE }),
    (db) => [
      { provide: DataSource, useValue: db },
      { provide: Transactions, useValue: new Transactions(db) },
      ...providers,
    ],
  );
}
