import { createSlice, original, type PayloadAction } from '@reduxjs/toolkit';
import { isBlankText, type MediaKind } from '@bns/contracts';
import type { Recipient } from '../../api/types.js';

/** The file sent with the message (its caption): what POST /api/media answered, and a local picture of it. */
export interface Attachment {
  mediaId: string;
  kind: MediaKind;
  fileName: string;
  /** Bytes. */
  size: number;
  /** An object URL of the chosen image, for its thumbnail; none for other kinds or one a template brought. */
  previewUrl?: string;
}

export interface SenderState {
  message: string;
  /** 8-digit Hong Kong numbers, unique, in the order they were added. */
  phoneNumbers: string[];
  /** Per-number variables from an uploaded file ({{name}} placeholders); blank cells are left out. */
  variables: Record<string, Record<string, string>>;
  /** Per-number spreadsheet row of an uploaded file, so the review and the server name the same rows. */
  rows: Record<string, number>;
  /**
   * The template this send came from (Use), until a send of it is accepted: its use is counted then,
   * also when the first try was refused and the user fixed the send and started it from Step 1.
   */
  templateId: string | null;
  /** One attachment per message, or none. */
  attachment: Attachment | null;
}

export const initialSenderState: SenderState = {
  message: '',
  phoneNumbers: [],
  variables: {},
  rows: {},
  templateId: null,
  attachment: null,
};

function addUnique(list: string[], numbers: readonly string[]): void {
  const seen = new Set(list);
  for (const n of numbers) {
    if (!seen.has(n)) {
      seen.add(n);
      list.push(n);
    }
  }
}

/** Recipients by column: `values[k][i]` is variable `names[k]` of recipient i ('' for none); row 0 = none. */
export interface RecipientColumns {
  phones: string[];
  rows: number[];
  names: string[];
  values: string[][];
}

type RecipientLists = Pick<SenderState, 'phoneNumbers' | 'variables' | 'rows'>;

/**
 * Merges recipients into copies of the lists, one `add` at a time. Everything is built as plain
 * objects and frozen: 200,000 writes through a draft's proxies, and Immer walking 200,000 new objects
 * to freeze them, would hold the page for seconds (frozen values are passed over).
 */
function merger(before: RecipientLists) {
  const phoneNumbers = [...before.phoneNumbers];
  const seen = new Set(phoneNumbers);
  const variables = { ...before.variables };
  const rows = { ...before.rows };
  return {
    /** `owned`: the variables object is new and nobody else's, so it is frozen as it is, not copied. */
    add(r: Recipient, owned = false) {
      if (!seen.has(r.phone)) {
        seen.add(r.phone);
        phoneNumbers.push(r.phone);
      }
      variables[r.phone] = Object.freeze(owned ? r.variables : { ...r.variables });
      if (r.row !== undefined) rows[r.phone] = r.row;
      else delete rows[r.phone];
    },
    done: (): RecipientLists => ({
      phoneNumbers: Object.freeze(phoneNumbers) as string[],
      variables: Object.freeze(variables),
      rows: Object.freeze(rows),
    }),
  };
}

/** Recipient `i` of a file handed over by column (blank cells are no variable; row 0 is none). */
function columnRecipient({ phones, rows, names, values }: RecipientColumns, i: number): Recipient {
  const variables: Record<string, string> = {};
  for (let k = 0; k < names.length; k++) if (values[k]![i] !== '') variables[names[k]!] = values[k]![i]!;
  return { phone: phones[i]!, variables, row: rows[i]! > 0 ? rows[i] : undefined };
}

/** Adds recipients to the draft in one go. */
function imported(s: SenderState, count: number, at: (i: number) => Recipient): void {
  const m = merger(original(s)!);
  for (let i = 0; i < count; i++) m.add(at(i));
  Object.assign(s, m.done());
}

/** How many recipients are merged between two yields to the page (a few milliseconds' work). */
const MERGE_SLICE = 5_000;
const nextTask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * The lists with a file's recipients merged in, built a slice at a time with the page free in
 * between, so adding 200,000 recipients never holds the main thread for long. `base` is the sender
 * the merge started from; the result is handed to `recipientsMerged`.
 */
export async function mergeColumnsInSlices(
  base: RecipientLists,
  columns: RecipientColumns,
): Promise<{ base: RecipientLists; merged: RecipientLists; columns: RecipientColumns }> {
  const m = merger(base);
  const count = columns.phones.length;
  for (let i = 0; i < count;) {
    const end = Math.min(count, i + MERGE_SLICE);
    for (; i < end; i++) m.add(columnRecipient(columns, i), true);
    if (i < count) await nextTask();
  }
  const { phoneNumbers, variables, rows } = base;
  return { base: { phoneNumbers, variables, rows }, merged: m.done(), columns };
}

export const senderSlice = createSlice({
  name: 'sender',
  initialState: initialSenderState,
  reducers: {
    messageChanged(s, a: PayloadAction<string>) {
      s.message = a.payload;
    },
    /** Numbers already validated; duplicates are merged (SPEC §5, always on). */
    numbersAdded(s, a: PayloadAction<readonly string[]>) {
      addUnique(s.phoneNumbers, a.payload);
    },
    numberRemoved(s, a: PayloadAction<string>) {
      s.phoneNumbers = s.phoneNumbers.filter((n) => n !== a.payload);
      delete s.variables[a.payload];
      delete s.rows[a.payload];
    },
    /** "Send to the others": the recipients without values leave the list. */
    numbersRemoved(s, a: PayloadAction<readonly string[]>) {
      const gone = new Set(a.payload);
      s.phoneNumbers = s.phoneNumbers.filter((n) => !gone.has(n));
      for (const n of gone) {
        delete s.variables[n];
        delete s.rows[n];
      }
    },
    /** "Fill in the default": each listed recipient gets `value` for every placeholder it has no value for. */
    missingValuesFilled(s, a: PayloadAction<{ phones: readonly string[]; names: readonly string[]; value: string }>) {
      for (const phone of a.payload.phones) {
        const vars = (s.variables[phone] ??= {});
        for (const name of a.payload.names) if (!hasValue(vars, name)) vars[name] = a.payload.value;
      }
    },
    numbersCleared(s) {
      s.phoneNumbers = [];
      s.variables = {};
      s.rows = {};
    },
    /** Rows of an uploaded file (or a past campaign): their numbers join the list and carry their variables. */
    recipientsImported(s, a: PayloadAction<readonly Recipient[]>) {
      imported(s, a.payload.length, (i) => a.payload[i]!);
    },
    /** The same, as the file reader hands a large file over: one array per column. */
    recipientColumnsImported(s, a: PayloadAction<RecipientColumns>) {
      imported(s, a.payload.phones.length, (i) => columnRecipient(a.payload, i));
    },
    /**
     * The lists `mergeColumnsInSlices` built: taken whole when the sender is still the one it started
     * from, else (numbers changed meanwhile) the columns are merged again into what is there now.
     */
    recipientsMerged(s, a: PayloadAction<{ base: RecipientLists; merged: RecipientLists; columns: RecipientColumns }>) {
      const { base, merged, columns } = a.payload;
      const now = original(s)!;
      if (now.phoneNumbers === base.phoneNumbers && now.variables === base.variables && now.rows === base.rows)
        Object.assign(s, merged);
      else imported(s, columns.phones.length, (i) => columnRecipient(columns, i));
    },
    /** A template's (or a past campaign's) message and numbers replace the send; `templateId` for a template's Use. */
    templateLoaded(
      s,
      a: PayloadAction<{
        message: string;
        phoneNumbers: readonly string[];
        templateId?: string;
        attachment?: Attachment | null;
      }>,
    ) {
      s.message = a.payload.message;
      s.attachment = a.payload.attachment ?? null;
      s.phoneNumbers = [];
      s.variables = {};
      s.rows = {};
      s.templateId = a.payload.templateId ?? null;
      addUnique(s.phoneNumbers, a.payload.phoneNumbers);
    },
    /** The template's use was counted (its send was accepted): later sends of this text are not its uses. */
    templateUseCounted(s) {
      s.templateId = null;
    },
    attachmentSet(s, a: PayloadAction<Attachment>) {
      s.attachment = a.payload;
    },
    attachmentRemoved(s) {
      s.attachment = null;
    },
    senderReset() {
      return initialSenderState;
    },
  },
  selectors: {
    selectMessage: (s) => s.message,
    selectPhoneNumbers: (s) => s.phoneNumbers,
    selectVariables: (s) => s.variables,
    selectRows: (s) => s.rows,
    selectAttachment: (s) => s.attachment,
  },
});

export const {
  messageChanged,
  numbersAdded,
  numberRemoved,
  numbersRemoved,
  missingValuesFilled,
  numbersCleared,
  recipientsImported,
  recipientColumnsImported,
  recipientsMerged,
  templateLoaded,
  templateUseCounted,
  attachmentSet,
  attachmentRemoved,
  senderReset,
} = senderSlice.actions;
export const { selectMessage, selectPhoneNumbers, selectVariables, selectRows, selectAttachment } =
  senderSlice.selectors;

/** A value a message can show: a blank cell, or one of only invisible characters, is no value (the server treats it the same). */
export function hasValue(vars: Record<string, string> | undefined, name: string): boolean {
  return vars !== undefined && Object.hasOwn(vars, name) && !isBlankText(vars[name]!);
}

/** The recipients as the start call sends them: variables only when a file gave some, and each file row's number. */
export function recipientsOf(s: SenderState): Recipient[] {
  return s.phoneNumbers.map((phone) => ({
    phone,
    variables: s.variables[phone] ?? {},
    ...(s.rows[phone] !== undefined ? { row: s.rows[phone] } : {}),
  }));
}

export function hasVariables(s: SenderState): boolean {
  return s.phoneNumbers.some((p) => Object.keys(s.variables[p] ?? {}).length > 0);
}

export interface MissingValues {
  phone: string;
  /** Its spreadsheet row; undefined for a number typed by hand. */
  row?: number;
  names: string[];
}

/** The recipients that have no value for a placeholder of the message (what the server would refuse). */
export function missingValuesOf(
  s: Pick<SenderState, 'phoneNumbers' | 'variables' | 'rows'>,
  placeholders: readonly string[],
): MissingValues[] {
  if (placeholders.length === 0) return [];
  const out: MissingValues[] = [];
  for (const phone of s.phoneNumbers) {
    const names = placeholders.filter((name) => !hasValue(s.variables[phone], name));
    if (names.length > 0) out.push({ phone, ...(s.rows[phone] !== undefined ? { row: s.rows[phone] } : {}), names });
  }
  return out;
}
