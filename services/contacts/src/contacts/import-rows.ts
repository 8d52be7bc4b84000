import { CONTACTS_LIMITS, normalizeHkPhone, variableNameOf, type ContactImportAnswer } from '@bns/contracts';
import type { ImportRow } from './contacts.repository.js';

const L = CONTACTS_LIMITS;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Text of a cell: numbers and booleans as their text; NUL dropped (Postgres cannot store it). */
function cell(value: unknown, max: number): string {
  if (typeof value === 'string') {
    const text = value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
    return text.trim().slice(0, max);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}

function tagsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[,;]/) : [];
  return list.map((t) => cell(t, L.tagMax)).filter((t) => t !== '');
}

export interface MergedImport {
  rows: ImportRow[];
  invalidRows: number[];
  duplicates: number;
}

/**
 * The rows of an import merged by number, in first-seen order. A row whose phone is not a number is
 * `invalid` (its 1-based position is kept for the downloadable list). A number seen again is a
 * duplicate: its later non-empty values win and its tags are added. Field names become
 * `{{variable}}` names ("First Name" → first_name); empty values never overwrite.
 */
export function mergeImportRows(input: readonly unknown[], extraTags: readonly string[] = []): MergedImport {
  const byPhone = new Map<string, ImportRow>();
  // A spreadsheet repeats the same few column titles on every row: each is turned into a name once.
  const keyNames = new Map<string, string>();
  const keyName = (key: string) => {
    let name = keyNames.get(key);
    if (name !== undefined) return name;
    name = variableNameOf(key).slice(0, L.fieldKeyMax);
    // Bounded: a body of ever-new titles gains nothing from remembering them.
    if (keyNames.size < 1_000) keyNames.set(key, name);
    return name;
  };
  const distinct = (tags: string[]) => (tags.length < 2 ? tags : [...new Set(tags)]);
  const invalidRows: number[] = [];
  let duplicates = 0;
  input.forEach((raw, i) => {
    const row = isObject(raw) ? raw : {};
    const phone = normalizeHkPhone(row.phone);
    if (phone === undefined) {
      invalidRows.push(i + 1);
      return;
    }
    const name = cell(row.name, L.nameMax);
    const fields: Record<string, string> = {};
    if (isObject(row.fields)) {
      let kept = 0;
      for (const key in row.fields) {
        if (!Object.hasOwn(row.fields, key)) continue;
        const v = cell(row.fields[key], L.fieldValueMax);
        const k = keyName(key);
        if (v === '' || k === '_' || kept >= L.fieldsMax) continue;
        if (!Object.hasOwn(fields, k)) kept++;
        fields[k] = v;
      }
    }
    const tags = tagsOf(row.tags);
    const seen = byPhone.get(phone);
    if (!seen) {
      byPhone.set(phone, { phone, name: name || null, fields, tags: distinct(tags).slice(0, L.tagsMax) });
      return;
    }
    duplicates++;
    if (name) seen.name = name;
    Object.assign(seen.fields, fields);
    seen.tags = [...new Set([...seen.tags, ...tags])].slice(0, L.tagsMax);
  });
  const rows = [...byPhone.values()];
  // The import's own tags go on every contact, after the row's.
  if (extraTags.length > 0) for (const r of rows) r.tags = [...new Set([...r.tags, ...extraTags])].slice(0, L.tagsMax);
  return { rows, invalidRows, duplicates };
}

export function importAnswer(merged: MergedImport, written: { created: number; updated: number }): ContactImportAnswer {
  return {
    created: written.created,
    updated: written.updated,
    invalid: merged.invalidRows.length,
    duplicates: merged.duplicates,
    invalidRows: merged.invalidRows,
  };
}
