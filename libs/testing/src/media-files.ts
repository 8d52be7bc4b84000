import { crc32 } from 'node:zlib';

/**
 * Small, well-formed files of every attachment format, and the broken ones an upload must refuse, built
 * in code so tests need no binary fixtures. Each is the smallest file the sniffer accepts as whole.
 */

const u32be = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
const box = (type: string, ...body: Buffer[]) => {
  const payload = Buffer.concat(body);
  return Buffer.concat([u32be(payload.length + 8), Buffer.from(type, 'latin1'), payload]);
};
const pngChunk = (type: string, data: Buffer) => {
  const t = Buffer.from(type, 'latin1');
  return Buffer.concat([u32be(data.length), t, data, u32be(crc32(Buffer.concat([t, data])))]);
};

/** `fill` bytes of filler between a format's header and its end, to reach a size. */
export function jpeg(fill = 256): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0, 0, 1, 0, 1, 0, 0]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, Buffer.alloc(fill, 0x11), Buffer.from([0xff, 0xd9])]);
}

export function png(fill = 64): Buffer {
  const ihdr = Buffer.concat([u32be(1), u32be(1), Buffer.from([8, 2, 0, 0, 0])]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', Buffer.alloc(fill, 0x22)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

export function webp(fill = 64): Buffer {
  const chunk = Buffer.concat([Buffer.from('VP8L', 'latin1'), Buffer.alloc(4), Buffer.alloc(fill, 0x2f)]);
  chunk.writeUInt32LE(fill, 4);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(4 + chunk.length);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), size, Buffer.from('WEBP', 'latin1'), chunk]);
}

function isoMedia(brand: string, codec: string, fill: number): Buffer {
  const ftyp = box('ftyp', Buffer.from(brand, 'latin1'), u32be(0), Buffer.from(`${brand}isom`, 'latin1'));
  const stsd = box('stsd', u32be(0), u32be(1), box(codec, Buffer.alloc(16)));
  const moov = box('moov', box('mvhd', Buffer.alloc(20)), box('trak', box('mdia', box('minf', box('stbl', stsd)))));
  return Buffer.concat([ftyp, moov, box('mdat', Buffer.alloc(fill, 0x33))]);
}
export const mp4 = (fill = 256, codec = 'avc1') => isoMedia('isom', codec, fill);
export const m4a = (fill = 256) => isoMedia('M4A ', 'mp4a', fill);

export function mp3(frames = 8): Buffer {
  const id3 = Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 0]);
  const frame = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(413, 0x55)]);
  return Buffer.concat([id3, ...Array.from({ length: frames }, () => frame)]);
}

function oggPage(flags: number, seq: number, body: Buffer): Buffer {
  const header = Buffer.alloc(27);
  header.write('OggS', 0, 'latin1');
  header[5] = flags;
  header.writeUInt32LE(seq, 18);
  header[26] = 1;
  return Buffer.concat([header, Buffer.from([body.length]), body]);
}
export function ogg(): Buffer {
  const head = Buffer.concat([Buffer.from('OpusHead', 'latin1'), Buffer.from([1, 1, 0, 0, 0x80, 0xbb, 0, 0, 0, 0, 0])]);
  return Buffer.concat([
    oggPage(0x02, 0, head),
    oggPage(0, 1, Buffer.alloc(100, 0x44)),
    oggPage(0x04, 2, Buffer.alloc(50, 0x45)),
  ]);
}

export function pdf(body = 'BT /F1 12 Tf (Invoice) Tj ET'): Buffer {
  return Buffer.from(
    `%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Length ${body.length} >> stream\n${body}\nendstream endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n`,
    'latin1',
  );
}

export interface ZipEntrySpec {
  name: string;
  data?: Buffer;
  /** Declared unpacked size, when it should lie (a zip bomb's claim). */
  declaredSize?: number;
}
/** A ZIP with stored (uncompressed) entries. */
export function zip(entries: ZipEntrySpec[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = e.data ?? Buffer.from(`content of ${e.name}`);
    const name = Buffer.from(e.name, 'utf8');
    const crc = crc32(data);
    const unpacked = e.declaredSize ?? data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(unpacked, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(unpacked, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
const office = (folder: string, part: string) =>
  zip([
    { name: '[Content_Types].xml', data: Buffer.from('<?xml version="1.0"?><Types/>') },
    { name: '_rels/.rels' },
    { name: `${folder}/${part}` },
  ]);
export const docx = () => office('word', 'document.xml');
export const xlsx = () => office('xl', 'workbook.xml');
export const pptx = () => office('ppt', 'presentation.xml');

/** One file of every accepted format, with the kind it is stored as. */
export const GOOD_MEDIA: ReadonlyArray<{ name: string; bytes: () => Buffer; kind: string }> = [
  { name: 'photo.jpg', bytes: () => jpeg(), kind: 'image' },
  { name: 'logo.png', bytes: () => png(), kind: 'image' },
  { name: 'sticker.webp', bytes: () => webp(), kind: 'image' },
  { name: 'clip.mp4', bytes: () => mp4(), kind: 'video' },
  { name: 'jingle.mp3', bytes: () => mp3(), kind: 'audio' },
  { name: 'voice.ogg', bytes: () => ogg(), kind: 'audio' },
  { name: 'song.m4a', bytes: () => m4a(), kind: 'audio' },
  { name: 'invoice.pdf', bytes: () => pdf(), kind: 'document' },
  { name: 'letter.docx', bytes: docx, kind: 'document' },
  { name: 'prices.xlsx', bytes: xlsx, kind: 'document' },
  { name: 'deck.pptx', bytes: pptx, kind: 'document' },
  { name: 'bundle.zip', bytes: () => zip([{ name: 'a.txt' }, { name: 'b/c.txt' }]), kind: 'document' },
  { name: 'notes.txt', bytes: () => Buffer.from('Opening hours: 9–5 ☺\n'), kind: 'document' },
  { name: 'list.csv', bytes: () => Buffer.from('name,phone\nAnn,91234567\n'), kind: 'document' },
];

const MiB = 1024 * 1024;
/**
 * Files an upload refuses, each with the message key it is refused with (MEDIA_MESSAGES), the status,
 * and `sizeOver` for the ones refused by size.
 */
export const BAD_MEDIA: ReadonlyArray<{
  label: string;
  name: string;
  bytes: () => Buffer;
  message: string;
  status?: number;
}> = [
  {
    label: 'random bytes named .jpg',
    name: 'x.jpg',
    bytes: () => Buffer.from(Array.from({ length: 600 }, (_, i) => ((i * 7919) % 256) & 0x0f)),
    message: 'unsupported',
  },
  { label: 'an image over 5 MB', name: 'big.png', bytes: () => png(5 * MiB), message: 'tooLarge:image', status: 413 },
  { label: 'a video over 16 MB', name: 'clip.mp4', bytes: () => mp4(16 * MiB), message: 'tooLarge:video', status: 413 },
  {
    label: 'a sound over 16 MB',
    name: 'song.mp3',
    bytes: () => mp3(Math.ceil((16 * MiB) / 417) + 1),
    message: 'tooLarge:audio',
    status: 413,
  },
  {
    label: 'a document over 64 MB',
    name: 'catalogue.pdf',
    bytes: () => pdf('x'.repeat(64 * MiB)),
    message: 'tooLarge:document',
    status: 413,
  },
  {
    label: 'a text file over 64 MB (no kind of its own)',
    name: 'log.txt',
    bytes: () => Buffer.alloc(64 * MiB + 1, 0x61),
    message: 'uploadTooLarge',
    status: 413,
  },
  { label: 'an empty file', name: 'empty.pdf', bytes: () => Buffer.alloc(0), message: 'empty' },
  { label: 'a control character in the file name', name: 'logo\u0007.png', bytes: () => png(), message: 'nameInvalid' },
  {
    label: 'a file name over 200 characters',
    name: `${'a'.repeat(197)}.png`,
    bytes: () => png(),
    message: 'nameTooLong',
  },
  { label: 'a path in the file name', name: '../../etc/logo.png', bytes: () => png(), message: 'nameHasPath' },
  {
    label: 'a Windows path in the file name',
    name: 'C:\\Users\\me\\logo.png',
    bytes: () => png(),
    message: 'nameHasPath',
  },
  {
    label: 'a polyglot PDF/HTML',
    name: 'invoice.pdf',
    bytes: () => pdf('<html><body><script>alert(1)</script></body></html>'),
    message: 'polyglot',
  },
  {
    label: 'a zip bomb as DOCX',
    name: 'bomb.docx',
    bytes: () =>
      zip([
        { name: '[Content_Types].xml' },
        { name: 'word/document.xml', data: Buffer.alloc(1000), declaredSize: 1_000_000_000 },
      ]),
    message: 'zipBomb',
  },
  {
    label: 'a Windows program named .pdf',
    name: 'invoice.pdf',
    bytes: () => Buffer.concat([Buffer.from('MZ'), Buffer.alloc(5000, 0x90)]),
    message: 'program',
  },
  {
    label: 'a Linux program named .mp4',
    name: 'clip.mp4',
    bytes: () => Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), Buffer.alloc(5000)]),
    message: 'program',
  },
  {
    label: 'a shell script named .txt',
    name: 'notes.txt',
    bytes: () => Buffer.from('#!/bin/sh\nrm -rf /\n'),
    message: 'program',
  },
  {
    label: 'an HTML page named .jpg',
    name: 'photo.jpg',
    bytes: () => Buffer.from('<!DOCTYPE html><html><body>hi</body></html>'),
    message: 'webPage',
  },
  {
    label: 'a truncated JPEG',
    name: 'photo.jpg',
    bytes: () => jpeg(5000).subarray(0, 3000),
    message: 'truncated:jpeg',
  },
  { label: 'a truncated PNG', name: 'logo.png', bytes: () => png(5000).subarray(0, 3000), message: 'truncated:png' },
  { label: 'a truncated PDF', name: 'invoice.pdf', bytes: () => pdf().subarray(0, 60), message: 'truncated:pdf' },
  { label: 'a truncated MP4', name: 'clip.mp4', bytes: () => mp4(8000).subarray(0, 6000), message: 'truncated:mp4' },
  { label: 'an HEVC video', name: 'clip.mp4', bytes: () => mp4(256, 'hvc1'), message: 'videoCodec' },
  {
    label: 'a text file not in UTF-8',
    name: 'notes.txt',
    bytes: () => Buffer.from('caf\xe9 cr\xe8me', 'latin1'),
    message: 'textNotUtf8',
  },
  {
    label: 'a CSV with NUL bytes',
    name: 'list.csv',
    bytes: () => Buffer.from('name,phone\nAnn\u0000,9123\n'),
    message: 'textBinary',
  },
  { label: 'a JPEG named .pdf', name: 'invoice.pdf', bytes: () => jpeg(), message: 'nameMismatch' },
  {
    label: 'a plain ZIP named .docx',
    name: 'letter.docx',
    bytes: () => zip([{ name: 'a.txt' }]),
    message: 'officeMismatch',
  },
  {
    label: 'a ZIP escaping its folder',
    name: 'bundle.zip',
    bytes: () => zip([{ name: '../../evil.sh' }]),
    message: 'zipUnsafeName',
  },
  {
    label: 'a ZIP cut off before its file list',
    name: 'bundle.zip',
    bytes: () => zip([{ name: 'a.txt' }]).subarray(0, 40),
    message: 'zipUnreadable',
  },
];

type Messages = Record<string, string | ((...args: string[]) => string)>;
/** The text a BAD_MEDIA item is refused with, from the contracts' MEDIA_MESSAGES (passed in). */
export function expectedMessage(messages: Messages, item: { name: string; message: string }): string {
  const [key, arg] = item.message.split(':') as [string, string | undefined];
  const entry = messages[key];
  if (typeof entry === 'string') return entry;
  if (!entry) throw new Error(`no message ${key}`);
  if (key === 'nameMismatch') return entry(item.name.slice(item.name.lastIndexOf('.') + 1), 'jpeg');
  return entry(arg ?? '');
}
