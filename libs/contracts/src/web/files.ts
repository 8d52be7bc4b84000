/**
 * Contact files read in the browser (CSV or XLSX, parsed in a Web Worker). The limits are stated next to
 * the drop zone in the same words the refusals use, so a user knows them before choosing a file.
 */
export const FILE_LIMITS = {
  /** 20 MiB: a 200,000-row file with a few columns of names and notes fits. */
  maxBytes: 20 * 1024 * 1024,
  /** Data rows read from one file; the header row is not counted. */
  maxRows: 200_000,
  /**
   * What an XLSX may expand to once unzipped (its parts' declared sizes added up): a few MB of zip can
   * hold gigabytes of XML, which no tab can hold.
   */
  xlsxMaxExpandedBytes: 200 * 1024 * 1024,
  /** Bytes read per step of a CSV (progress is reported after each). */
  csvChunkBytes: 4 * 1024 * 1024,
  /** Bytes looked at to tell a CSV from other files. */
  sniffBytes: 64 * 1024,
} as const;

const mb = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`;
const count = (n: number) => n.toLocaleString('en-US');

export const FILE_MESSAGES = {
  /** Next to the drop zone. */
  limitsNote: `CSV or XLSX, up to ${mb(FILE_LIMITS.maxBytes)} and ${count(FILE_LIMITS.maxRows)} rows. The file is read on this device.`,
  notSpreadsheet: 'This file is not a CSV or XLSX file.',
  tooLarge: (bytes: number) =>
    `This file is ${mb(bytes)}, larger than the ${mb(FILE_LIMITS.maxBytes)} a file may have. Split it into smaller files.`,
  tooManyRows: `This file has more than ${count(FILE_LIMITS.maxRows)} rows. Split it into files of at most ${count(FILE_LIMITS.maxRows)} rows.`,
  xlsxTooLarge: `This XLSX file expands to more than ${mb(FILE_LIMITS.xlsxMaxExpandedBytes)} when opened. Save it as CSV, or split it into smaller files.`,
  reading: 'Reading the file…',
  cancel: 'Cancel',
  cancelled: 'Reading the file was cancelled.',
  rowsRead: (n: number) => `${count(n)} ${n === 1 ? 'row' : 'rows'}`,
} as const;

/** The sender's number chips: past this many (a list from a file), the rest are counted, not drawn. */
export const CHIPS_SHOWN = 200;
