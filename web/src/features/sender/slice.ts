import { createSlice, type PayloadAction } from '@reduxjs/toolkit';
import type { Recipient } from '../../api/types.js';

export interface SenderState {
  message: string;
  /** 8-digit Hong Kong numbers, unique, in the order they were added. */
  phoneNumbers: string[];
  /** Per-number variables from an uploaded file ({{name}} placeholders). */
  variables: Record<string, Record<string, string>>;
}

export const initialSenderState: SenderState = { message: '', phoneNumbers: [], variables: {} };

function addUnique(list: string[], numbers: readonly string[]): void {
  const seen = new Set(list);
  for (const n of numbers) {
    if (!seen.has(n)) {
      seen.add(n);
      list.push(n);
    }
  }
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
    },
    numbersCleared(s) {
      s.phoneNumbers = [];
      s.variables = {};
    },
    /** Rows of an uploaded file: their numbers join the list and carry their variables. */
    recipientsImported(s, a: PayloadAction<readonly Recipient[]>) {
      addUnique(
        s.phoneNumbers,
        a.payload.map((r) => r.phone),
      );
      for (const r of a.payload) s.variables[r.phone] = { ...r.variables };
    },
    templateLoaded(s, a: PayloadAction<{ message: string; phoneNumbers: readonly string[] }>) {
      s.message = a.payload.message;
      s.phoneNumbers = [];
      s.variables = {};
      addUnique(s.phoneNumbers, a.payload.phoneNumbers);
    },
    senderReset() {
      return initialSenderState;
    },
  },
  selectors: {
    selectMessage: (s) => s.message,
    selectPhoneNumbers: (s) => s.phoneNumbers,
    selectVariables: (s) => s.variables,
  },
});

export const { messageChanged, numbersAdded, numberRemoved, numbersCleared, recipientsImported, templateLoaded, senderReset } = senderSlice.actions;
export const { selectMessage, selectPhoneNumbers, selectVariables } = senderSlice.selectors;

/** The recipients as the start call sends them: variables only when a file gave some. */
export function recipientsOf(s: SenderState): Recipient[] {
  return s.phoneNumbers.map((phone) => ({ phone, variables: s.variables[phone] ?? {} }));
}

export function hasVariables(s: SenderState): boolean {
  return s.phoneNumbers.some((p) => Object.keys(s.variables[p] ?? {}).length > 0);
}
