import { Blob as NodeBlob } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { FILE_LIMITS, FILE_MESSAGES, WEB_MESSAGES } from '@bns/contracts';
import writeXlsxFile from 'write-excel-file/node';
import { CsvStreamParser, parseCsv } from '../csv.js';
import { createImportHandler, readContactsFile, RECIPIENTS_PART, type ImportReply } from '../importCore.js';
import { ContactsFileReader } from '../importClient.js';
import { isZip, looksLikeCsv, zipEntries } from '../sniff.js';
import { toTable } from '../mapping.js';

const bytes = (s: string) => new TextEncoder().encode(s);
/** Node's own Blob, as the Worker gets a File (jsdom's would do too). */
const blob = (parts: (string | Uint8Array)[]) => new NodeBlob(parts) as unknown as Blob;

describe('CsvStreamParser', () => {
  it('reads the same rows whatever the chunk boundaries (quotes, CRLF split across pieces)', () => {
    const text = '\uFEFFphone,note\r\n91234567,"Chan, ""Big"" Tai\r\nMan"\r\n61234567,Bo\r\n\r\n51234567,"x"\n';
    const whole = parseCsv(text);
    expect(whole).toEqual([
      ['phone', 'note'],
      ['91234567', 'Chan, "Big" Tai\nMan'],
      ['61234567', 'Bo'],
      ['51234567', 'x'],
    ]);
    for (let size = 1; size <= 7; size++) {
      const rows: string[][] = [];
      const parser = new CsvStreamParser((r) => rows.push(r));
      for (let i = 0; i < text.length; i += size) parser.push(text.slice(i, i + size));
      parser.end();
      expect(rows).toEqual(whole);
    }
  });

  it('reads a file that ends without a line break, and lone CR line ends', () => {
    expect(parseCsv('phone;name\r91234567;Ann')).toEqual([
      ['phone', 'name'],
      ['91234567', 'Ann'],
    ]);
  });

  it(
    'turns 200,000 rows into 200,000 arrays without a call that takes them all as arguments',
    { timeout: 30_000 },
    () => {
      const text = 'phone,name\n' + Array.from({ length: 200_000 }, (_, i) => `${60000000 + i},Name ${i}`).join('\n');
      const rows = parseCsv(text);
      expect(rows).toHaveLength(200_001);
      expect(toTable(rows).rows).toHaveLength(200_000);
    },
  );
});

describe('what a file is, by its content', () => {
  it('a table of text is a CSV; a README, a binary file and an empty file are not', () => {
    expect(looksLikeCsv(bytes('phone,name\n91234567,Ann\n61234567,Ben\n'))).toBe(true);
    expect(looksLikeCsv(bytes('Phone\n9123 4567\n6123 4567\n'))).toBe(true);
    expect(
      looksLikeCsv(
        bytes(
          '# My project\n\nThis tool sends messages, paced and tracked.\nInstall it with npm.\n\nUsage: run it, then open the page, and sign in.\n',
        ),
      ),
    ).toBe(false);
    expect(looksLikeCsv(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]))).toBe(false);
    expect(looksLikeCsv(new Uint8Array())).toBe(false);
  });

  it('reads an XLSX zip directory: its parts and how large they expand', async () => {
    const xlsx = new Uint8Array(await writeXlsxFile([[{ value: 'phone' }], [{ value: '91234567' }]]).toBuffer());
    expect(isZip(xlsx)).toBe(true);
    const entries = zipEntries(xlsx)!;
    expect(entries.names).toContain('xl/workbook.xml');
    expect(entries.expandedBytes).toBeGreaterThan(0);
  });
});

describe('readContactsFile', () => {
  it('refuses a file over the size limit before reading it', async () => {
    const big = { size: FILE_LIMITS.maxBytes + 1 } as Blob;
    await expect(readContactsFile(big)).rejects.toThrow(FILE_MESSAGES.tooLarge(FILE_LIMITS.maxBytes + 1));
  });

  it('refuses a binary file and a zip that is not a workbook with one plain sentence', async () => {
    await expect(readContactsFile(blob([new Uint8Array([0, 1, 2, 3, 255, 254])]))).rejects.toThrow(
      FILE_MESSAGES.notSpreadsheet,
    );
    const zip = new Uint8Array(await writeXlsxFile([[{ value: 'x' }]]).toBuffer());
    // The same zip with the workbook part renamed in its directory.
    const text = new TextDecoder('latin1').decode(zip).replaceAll('xl/workbook.xml', 'xl/workbooX.xml');
    const renamed = Uint8Array.from(text, (c) => c.charCodeAt(0));
    await expect(readContactsFile(blob([renamed]))).rejects.toThrow(FILE_MESSAGES.notSpreadsheet);
  });

  it('refuses an XLSX that says it expands past the limit', async () => {
    const zip = new Uint8Array(await writeXlsxFile([[{ value: 'x' }]]).toBuffer());
    const entries = zipEntries(zip)!;
    expect(entries.expandedBytes).toBeLessThan(FILE_LIMITS.xlsxMaxExpandedBytes);
    // Declared sizes are what is checked: set the first part's to 0xFFFFFFFF.
    const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
    for (let i = zip.length - 22; i >= 0; i--) {
      if (view.getUint32(i, true) === 0x06054b50) {
        const dir = view.getUint32(i + 16, true);
        view.setUint32(dir + 24, 0xffffffff, true);
        break;
      }
    }
    await expect(readContactsFile(blob([zip]))).rejects.toThrow(FILE_MESSAGES.xlsxTooLarge);
  });

  it('reads an XLSX into text rows', async () => {
    const zip = new Uint8Array(
      await writeXlsxFile([
        [{ value: 'phone' }, { value: 'name' }],
        [{ value: '91234567' }, { value: 'Ann' }],
      ]).toBuffer(),
    );
    expect(await readContactsFile(blob([zip]))).toEqual([
      ['phone', 'name'],
      ['91234567', 'Ann'],
    ]);
  });

  it(
    'reads a CSV in chunks with progress, and refuses one with more rows than the limit',
    { timeout: 30_000 },
    async () => {
      const rows =
        'phone,name\n' + Array.from({ length: 200_000 }, (_, i) => `${60000000 + i},Customer number ${i}`).join('\n');
      const seen: number[] = [];
      const cells = await readContactsFile(blob([rows]), (p) => seen.push(p.bytes));
      expect(cells).toHaveLength(200_001);
      expect(seen.length).toBeGreaterThan(1);
      expect(seen.at(-1)).toBe(blob([rows]).size);

      const tooMany =
        'phone\n' + Array.from({ length: FILE_LIMITS.maxRows + 1 }, (_, i) => `${60000000 + i}`).join('\n');
      await expect(readContactsFile(blob([tooMany]))).rejects.toThrow(FILE_MESSAGES.tooManyRows);
    },
  );
});

describe('the reader conversation', () => {
  it('answers a read with the table, a mapping with its summary, and recipients', async () => {
    const replies: ImportReply[] = [];
    const handle = createImportHandler((r) => replies.push(r));
    await handle({ id: 1, type: 'read', file: blob(['Name,Mobile\nAnn,91234567\nBen,123\n']) });
    const table = replies.find((r) => r.type === 'table');
    expect(table).toMatchObject({
      id: 1,
      table: { header: ['Name', 'Mobile'], rowCount: 2, summary: { valid: 1, invalidCount: 1 } },
    });
    if (table?.type !== 'table') throw new Error('no table');
    await handle({ id: 2, type: 'recipients', mapping: table.table.mapping });
    expect(replies.at(-1)).toEqual({ id: 2, type: 'recipients', count: 1 });
    await handle({ id: 4, type: 'recipientsPart', from: 0 });
    expect(replies.at(-1)).toEqual({
      id: 4,
      type: 'recipientsPart',
      columns: { phones: ['91234567'], rows: [2], names: ['name'], values: [['Ann']] },
    });
    await handle({ id: 3, type: 'read', file: blob(['']) });
    expect(replies.at(-1)).toEqual({ id: 3, type: 'error', message: FILE_MESSAGES.notSpreadsheet });
    expect(WEB_MESSAGES.fileNoRows).toBeTruthy();
  });
});

describe('recipients handed over in parts', () => {
  it('the page asks for a large list a part at a time and joins the parts in order', async () => {
    const n = RECIPIENTS_PART * 2 + 5;
    const csv = 'phone,name\n' + Array.from({ length: n }, (_, i) => `${60000000 + i},C${i}`).join('\n') + '\n';
    const replies: ImportReply[] = [];
    const handle = createImportHandler((r) => replies.push(r));
    await handle({ id: 1, type: 'read', file: blob([csv]) });
    const table = replies.find((r) => r.type === 'table');
    if (table?.type !== 'table') throw new Error('no table');
    await handle({ id: 2, type: 'recipients', mapping: table.table.mapping });
    expect(replies.at(-1)).toEqual({ id: 2, type: 'recipients', count: n });
    await handle({ id: 3, type: 'recipientsPart', from: RECIPIENTS_PART * 2 });
    const last = replies.at(-1);
    expect(last?.type === 'recipientsPart' && last.columns.phones).toEqual(
      Array.from({ length: 5 }, (_, i) => String(60000000 + RECIPIENTS_PART * 2 + i)),
    );
    // The page's reader (here without a Worker) asks part by part and joins them back into one list.
    const reader = new ContactsFileReader();
    await reader.read(blob([csv]), () => undefined);
    const columns = await reader.recipients(table.table.mapping);
    expect(columns.phones).toHaveLength(n);
    expect(columns.phones[RECIPIENTS_PART]).toBe(String(60000000 + RECIPIENTS_PART));
    expect(columns.values[0]![n - 1]).toBe(`C${n - 1}`);
    reader.close();
  });
});
