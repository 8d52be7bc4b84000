import type { RecipientColumns } from '../sender/slice.js';
import {
  createImportHandler,
  type ImportReply,
  type ImportRequest,
  type MappingSummary,
  type ReadProgress,
  type TableInfo,
} from './importCore.js';
import type { ColumnMapping } from './mapping.js';

/** A request before it is numbered (Omit of each member of the union). */
type Ask = ImportRequest extends infer R ? (R extends ImportRequest ? Omit<R, 'id'> : never) : never;

type Pending = {
  resolve: (reply: ImportReply) => void;
  reject: (e: Error) => void;
  onProgress?: (p: ReadProgress) => void;
};

/** Thrown to the page when the user cancelled the read. */
export class ReadCancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

/**
 * The page's side of the contact-file reader: one Web Worker per file, asked to read it, to check a
 * column mapping and to hand over the recipients. Cancel ends the worker at once, wherever it is. Where
 * there is no Worker (unit tests under jsdom) the same handler runs on the page.
 */
export class ContactsFileReader {
  private worker: Worker | null = null;
  private local: ((r: ImportRequest) => Promise<void>) | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor() {
    const onReply = (reply: ImportReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      if (reply.type === 'progress') {
        p.onProgress?.(reply.progress);
        return;
      }
      this.pending.delete(reply.id);
      if (reply.type === 'error') p.reject(new Error(reply.message));
      else p.resolve(reply);
    };
    if (typeof Worker === 'undefined') {
      this.local = createImportHandler(onReply);
    } else {
      this.worker = new Worker(new URL('./import.worker.ts', import.meta.url), { type: 'module' });
      this.worker.onmessage = (e: MessageEvent<ImportReply>) => onReply(e.data);
    }
  }

  private ask(request: Ask, onProgress?: (p: ReadProgress) => void): Promise<ImportReply> {
    const id = this.nextId++;
    const full = { ...request, id } as ImportRequest;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      if (this.worker) this.worker.postMessage(full);
      else if (this.local) void this.local(full);
      else reject(new ReadCancelled());
    });
  }

  async read(file: Blob, onProgress: (p: ReadProgress) => void): Promise<TableInfo> {
    const reply = await this.ask({ type: 'read', file }, onProgress);
    return (reply as Extract<ImportReply, { type: 'table' }>).table;
  }

  async map(mapping: ColumnMapping): Promise<MappingSummary> {
    const reply = await this.ask({ type: 'map', mapping });
    return (reply as Extract<ImportReply, { type: 'mapped' }>).summary;
  }

  /**
   * The mapped recipients, asked for a part at a time and joined here; the page runs between two parts,
   * so handing over 200,000 recipients never holds it for long.
   */
  async recipients(mapping: ColumnMapping): Promise<RecipientColumns> {
    const { count } = (await this.ask({ type: 'recipients', mapping })) as Extract<ImportReply, { type: 'recipients' }>;
    const all: RecipientColumns = { phones: [], rows: [], names: [], values: [] };
    const append = <T>(to: T[], from: readonly T[]) => {
      for (const x of from) to.push(x);
    };
    for (let from = 0; from < count;) {
      const { columns: part } = (await this.ask({ type: 'recipientsPart', from })) as Extract<
        ImportReply,
        { type: 'recipientsPart' }
      >;
      if (part.phones.length === 0) break;
      if (from === 0) {
        all.names = part.names;
        all.values = part.names.map(() => []);
      }
      append(all.phones, part.phones);
      append(all.rows, part.rows);
      part.values.forEach((v, k) => append(all.values[k]!, v));
      from += part.phones.length;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    return all;
  }

  /** Stops the worker (a read in progress ends there) and rejects what was still asked. */
  close(): void {
    this.worker?.terminate();
    this.worker = null;
    this.local = null;
    for (const p of this.pending.values()) p.reject(new ReadCancelled());
    this.pending.clear();
  }
}
