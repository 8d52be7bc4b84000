import { MEDIA_FORMATS, MEDIA_LIMITS, type MediaFormat, type MediaKind } from './limits.js';
import { MEDIA_MESSAGES } from './messages.js';

/** What an upload turned out to be, or why it is refused (`tooLarge`: the kind's or the upload's cap). */
export type SniffResult =
  { ok: true; format: MediaFormat; kind: MediaKind; mime: string } | { ok: false; message: string; tooLarge?: boolean };

/** The format is decided once this many bytes are in (or at the end of a smaller file). */
const DECIDE_AT_BYTES = 4096;

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const startsWith = (bytes: Uint8Array, prefix: readonly number[], at = 0) =>
  bytes.length >= at + prefix.length && prefix.every((b, i) => bytes[at + i] === b);

function indexOf(bytes: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0]!;
  for (
    let i = bytes.indexOf(first, from);
    i !== -1 && i <= bytes.length - needle.length;
    i = bytes.indexOf(first, i + 1)
  ) {
    let j = 1;
    while (j < needle.length && bytes[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

function lastIndexOf(bytes: Uint8Array, needle: Uint8Array): number {
  for (let i = bytes.length - needle.length; i >= 0; i--) {
    let j = 0;
    while (j < needle.length && bytes[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

const HTML_MARKERS = ['<!doctype html', '<html', '<script', '<body', '<iframe', '<svg', '<?xml-stylesheet'];
/** Whether the bytes (the head of a file) hold a web page's markup anywhere, case-insensitive. */
function holdsHtml(head: Uint8Array): boolean {
  const text = new TextDecoder('latin1').decode(head).toLowerCase();
  return HTML_MARKERS.some((m) => text.includes(m));
}
/** Whether the file starts (after white space and a BOM) like markup. */
function startsLikeMarkup(head: Uint8Array): boolean {
  const text = new TextDecoder('latin1')
    .decode(head.subarray(0, 1024))
    .replace(/^(\u00ef\u00bb\u00bf|\s)+/, '')
    .toLowerCase();
  return text.startsWith('<') && holdsHtml(head.subarray(0, 4096));
}

function isProgram(head: Uint8Array): boolean {
  return (
    startsWith(head, [0x4d, 0x5a]) || // MZ: Windows .exe/.dll
    startsWith(head, [0x7f, 0x45, 0x4c, 0x46]) || // ELF
    startsWith(head, [0xfe, 0xed, 0xfa, 0xce]) ||
    startsWith(head, [0xfe, 0xed, 0xfa, 0xcf]) ||
    startsWith(head, [0xce, 0xfa, 0xed, 0xfe]) ||
    startsWith(head, [0xcf, 0xfa, 0xed, 0xfe]) || // Mach-O
    startsWith(head, [0xca, 0xfe, 0xba, 0xbe]) || // Mach-O universal / Java class
    startsWith(head, [0x23, 0x21]) || // #! script
    startsWith(head, [0x00, 0x61, 0x73, 0x6d]) // WebAssembly
  );
}

/** The format the first bytes announce, before the rest is seen (text is decided at the end). */
function formatOfHead(head: Uint8Array): MediaFormat | 'text' | undefined {
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(head, [...ascii('RIFF')]) && startsWith(head, [...ascii('WEBP')], 8)) return 'webp';
  if (startsWith(head, [...ascii('ftyp')], 4)) {
    const brand = new TextDecoder('latin1').decode(head.subarray(8, 12));
    return brand === 'M4A ' || brand === 'M4B ' ? 'm4a' : 'mp4';
  }
  if (startsWith(head, [...ascii('ID3')])) return 'mp3';
  // An MPEG-1/2 layer III frame header.
  if (head.length >= 2 && head[0] === 0xff && (head[1]! & 0xe6) === 0xe2) return 'mp3';
  if (startsWith(head, [...ascii('OggS')])) return 'ogg';
  if (startsWith(head, [...ascii('%PDF-')])) return 'pdf';
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04])) return 'zip';
  return 'text';
}

interface ZipEntry {
  name: string;
  packed: number;
  unpacked: number;
}

/** Reads a ZIP's central directory from the file's last bytes; a string says why it cannot. */
function zipEntries(tail: Uint8Array, total: number): ZipEntry[] | 'unreadable' | 'bomb' {
  const eocd = lastIndexOf(tail.subarray(Math.max(0, tail.length - 65_557)), new Uint8Array([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) return 'unreadable';
  const base = Math.max(0, tail.length - 65_557) + eocd;
  const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  if (base + 22 > tail.length) return 'unreadable';
  const count = view.getUint16(base + 10, true);
  const size = view.getUint32(base + 12, true);
  const offset = view.getUint32(base + 16, true);
  // ZIP64 (a count or size that does not fit the short record) is more than any attachment needs.
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) return 'bomb';
  if (count > MEDIA_LIMITS.zipMaxEntries) return 'bomb';
  const tailStart = total - tail.length;
  if (offset + size > total || offset < tailStart) return 'unreadable';
  const entries: ZipEntry[] = [];
  let at = offset - tailStart;
  const names = new TextDecoder('utf-8');
  for (let i = 0; i < count; i++) {
    if (at + 46 > tail.length || view.getUint32(at, true) !== 0x02014b50) return 'unreadable';
    const packed = view.getUint32(at + 20, true);
    const unpacked = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const extra = view.getUint16(at + 30, true);
    const comment = view.getUint16(at + 32, true);
    if (packed === 0xffffffff || unpacked === 0xffffffff) return 'bomb';
    if (at + 46 + nameLength > tail.length) return 'unreadable';
    entries.push({ name: names.decode(tail.subarray(at + 46, at + 46 + nameLength)), packed, unpacked });
    at += 46 + nameLength + extra + comment;
  }
  return entries;
}

const OFFICE_FOLDERS: ReadonlyArray<[string, MediaFormat]> = [
  ['word/', 'docx'],
  ['xl/', 'xlsx'],
  ['ppt/', 'pptx'],
];

/**
 * Finds an upload's real type from its bytes, as they stream: `push` each chunk (it answers a refusal as
 * soon as one is certain: a program, a web page, over the size cap), then `finish` for the verdict.
 * It keeps only the first and the last bytes (MEDIA_LIMITS.sniffHeadBytes / sniffTailBytes), whatever the size.
 */
export class MediaSniffer {
  private head = new Uint8Array(0);
  private tailChunks: Uint8Array[] = [];
  private tailBytes = 0;
  private total = 0;
  private headFormat: MediaFormat | 'text' | undefined;
  private utf8: TextDecoder | undefined = new TextDecoder('utf-8', { fatal: true });
  private validUtf8 = true;
  private sawNul = false;
  // MP4 top-level boxes, walked as the bytes pass: where the next box header starts, and its bytes so far.
  private nextBox = 0;
  private boxHeader: number[] = [];
  private boxTypes = new Set<string>();
  private boxesBroken = false;
  private refusal: SniffResult | undefined;

  /** The kind's size cap once the format is known (the upload's cap before). */
  get maxBytes(): number {
    const f = this.headFormat;
    return f && f !== 'text' ? MEDIA_LIMITS.maxBytes[MEDIA_FORMATS[f].kind] : MEDIA_LIMITS.maxUploadBytes;
  }

  get size(): number {
    return this.total;
  }

  /** The refusal of a file past the upload's cap: in its kind's words once its format is known. */
  tooLargeRefusal(): Extract<SniffResult, { ok: false }> {
    const f = this.headFormat;
    return {
      ok: false,
      tooLarge: true,
      message: f && f !== 'text' ? MEDIA_MESSAGES.tooLarge(MEDIA_FORMATS[f].kind) : MEDIA_MESSAGES.uploadTooLarge,
    };
  }

  /** Adds the next bytes; answers a refusal once one is certain (later calls answer it again). */
  push(chunk: Uint8Array): Extract<SniffResult, { ok: false }> | undefined {
    if (this.refusal) return this.refusal as Extract<SniffResult, { ok: false }>;
    const start = this.total;
    this.total += chunk.length;
    if (this.head.length < MEDIA_LIMITS.sniffHeadBytes) {
      const take = chunk.subarray(0, MEDIA_LIMITS.sniffHeadBytes - this.head.length);
      const head = new Uint8Array(this.head.length + take.length);
      head.set(this.head);
      head.set(take, this.head.length);
      this.head = head;
    }
    this.keepTail(chunk);
    if (this.utf8) {
      try {
        this.utf8.decode(chunk, { stream: true });
      } catch {
        this.validUtf8 = false;
        this.utf8 = undefined;
      }
    }
    if (!this.sawNul && chunk.includes(0)) this.sawNul = true;
    if (this.headFormat === undefined) {
      // Decided on the first kilobytes, so markup after a comment or white space is seen too.
      if (this.head.length < DECIDE_AT_BYTES) return undefined;
      const early = this.decideHead();
      if (early) return this.refuse(early);
      // Every byte so far is in the head, but for the part of this chunk past it.
      if (this.isBoxed()) {
        this.walkBoxes(this.head, 0);
        if (this.total > this.head.length) this.walkBoxes(chunk.subarray(this.head.length - start), this.head.length);
      }
    } else if (this.isBoxed()) this.walkBoxes(chunk, start);
    if (this.total > this.maxBytes) {
      const f = this.headFormat;
      return this.refuse({
        ok: false,
        tooLarge: true,
        message: f && f !== 'text' ? MEDIA_MESSAGES.tooLarge(MEDIA_FORMATS[f].kind) : MEDIA_MESSAGES.uploadTooLarge,
      });
    }
    return undefined;
  }

  /** The verdict once every byte has been pushed; the file name is checked against what the bytes are. */
  finish(fileName: string): SniffResult {
    if (this.refusal) return this.refusal;
    if (this.total === 0) return { ok: false, message: MEDIA_MESSAGES.empty };
    if (this.headFormat === undefined) {
      const early = this.decideHead();
      if (early) return this.refuse(early);
      if (this.isBoxed()) this.walkBoxes(this.head, 0);
    }
    if (this.utf8) {
      try {
        this.utf8.decode();
      } catch {
        this.validUtf8 = false;
      }
    }
    const format = this.finalFormat();
    if (typeof format !== 'string') return format;
    const ext = extensionOf(fileName);
    // A text file named .csv is a CSV file.
    const named: MediaFormat = format === 'txt' && ext === 'csv' ? 'csv' : format;
    const allowed = MEDIA_FORMATS[named].ext as readonly string[];
    const known =
      ext !== undefined && Object.values(MEDIA_FORMATS).some((f) => (f.ext as readonly string[]).includes(ext));
    if (ext !== undefined && !allowed.includes(ext)) {
      if (['docx', 'xlsx', 'pptx'].includes(ext) && format === 'zip')
        return { ok: false, message: MEDIA_MESSAGES.officeMismatch };
      if (known || format !== 'txt') return { ok: false, message: MEDIA_MESSAGES.nameMismatch(ext, format) };
    }
    const f = MEDIA_FORMATS[named];
    return { ok: true, format: named, kind: f.kind, mime: f.mime };
  }

  private isBoxed(): boolean {
    return this.headFormat === 'mp4' || this.headFormat === 'm4a';
  }

  private refuse(result: Extract<SniffResult, { ok: false }>): Extract<SniffResult, { ok: false }> {
    this.refusal = result;
    return result;
  }

  private keepTail(chunk: Uint8Array): void {
    const cap = MEDIA_LIMITS.sniffTailBytes;
    const piece = chunk.length > cap ? chunk.subarray(chunk.length - cap) : chunk;
    // A copy: the caller may reuse its buffer.
    this.tailChunks.push(piece.slice());
    this.tailBytes += piece.length;
    while (this.tailBytes - this.tailChunks[0]!.length >= cap) this.tailBytes -= this.tailChunks.shift()!.length;
  }

  private tail(): Uint8Array {
    const all = new Uint8Array(this.tailBytes);
    let at = 0;
    for (const c of this.tailChunks) {
      all.set(c, at);
      at += c.length;
    }
    const cap = MEDIA_LIMITS.sniffTailBytes;
    return all.length > cap ? all.subarray(all.length - cap) : all;
  }

  private decideHead(): Extract<SniffResult, { ok: false }> | undefined {
    const head = this.head;
    if (isProgram(head)) return { ok: false, message: MEDIA_MESSAGES.program };
    if (startsLikeMarkup(head)) return { ok: false, message: MEDIA_MESSAGES.webPage };
    this.headFormat = formatOfHead(head);
    return undefined;
  }

  private walkBoxes(chunk: Uint8Array, start: number): void {
    const end = start + chunk.length;
    while (!this.boxesBroken && this.nextBox < end) {
      const from = Math.max(this.nextBox + this.boxHeader.length, start);
      if (from >= end) break;
      const need = (this.boxHeader.length >= 8 && readSize32(this.boxHeader) === 1 ? 16 : 8) - this.boxHeader.length;
      const take = chunk.subarray(from - start, Math.min(from - start + need, chunk.length));
      this.boxHeader.push(...take);
      if (this.boxHeader.length < 8) break;
      const size32 = readSize32(this.boxHeader);
      if (size32 === 1 && this.boxHeader.length < 16) continue;
      const type = String.fromCharCode(...this.boxHeader.slice(4, 8));
      if (!/^[\x20-\x7e]{4}$/.test(type)) {
        this.boxesBroken = true;
        break;
      }
      this.boxTypes.add(type);
      let size: number;
      if (size32 === 0) size = Number.POSITIVE_INFINITY;
      else if (size32 === 1) {
        const h = this.boxHeader;
        size = (h[8]! * 2 ** 24 + h[9]! * 2 ** 16 + h[10]! * 2 ** 8 + h[11]!) * 2 ** 32 + readSize32(h.slice(12, 16));
      } else size = size32;
      if (size < 8) {
        this.boxesBroken = true;
        break;
      }
      this.nextBox += size;
      this.boxHeader = [];
    }
  }

  private finalFormat(): MediaFormat | Extract<SniffResult, { ok: false }> {
    const format = this.headFormat!;
    const head = this.head;
    const tail = this.tail();
    const truncated = (f: MediaFormat) => ({ ok: false as const, message: MEDIA_MESSAGES.truncated(f) });
    switch (format) {
      case 'jpeg': {
        // The end-of-image marker, allowing padding some cameras add after it.
        const last = tail.subarray(Math.max(0, tail.length - 1024));
        return lastIndexOf(last, new Uint8Array([0xff, 0xd9])) >= 0 ? 'jpeg' : truncated('jpeg');
      }
      case 'png':
        return lastIndexOf(tail.subarray(Math.max(0, tail.length - 64)), ascii('IEND')) >= 0 ? 'png' : truncated('png');
      case 'webp': {
        const riff = new DataView(head.buffer, head.byteOffset).getUint32(4, true) + 8;
        return this.total === riff || this.total === riff + 1 ? 'webp' : truncated('webp');
      }
      case 'mp4':
      case 'm4a': {
        const whole = this.nextBox === this.total || this.nextBox === Number.POSITIVE_INFINITY;
        if (this.boxesBroken || !whole || !this.boxTypes.has('moov')) return truncated(format);
        if (format === 'mp4') {
          for (const codec of ['hvc1', 'hev1', 'av01', 'vp09', 'vp08', 'mp4v']) {
            if (indexOf(head, ascii(codec)) >= 0 || indexOf(tail, ascii(codec)) >= 0)
              return { ok: false, message: MEDIA_MESSAGES.videoCodec };
          }
        }
        return format;
      }
      case 'mp3':
        return this.total >= 128 ? 'mp3' : truncated('mp3');
      case 'ogg': {
        if (indexOf(head, ascii('OpusHead')) < 0 && indexOf(head, ascii('vorbis')) < 0) {
          return { ok: false, message: MEDIA_MESSAGES.unsupported };
        }
        // The last page carries the end-of-stream flag.
        const page = lastIndexOf(tail, ascii('OggS'));
        return page >= 0 && page + 5 < tail.length && (tail[page + 5]! & 0x04) !== 0 ? 'ogg' : truncated('ogg');
      }
      case 'pdf': {
        if (holdsHtml(head) || holdsHtml(tail.subarray(Math.max(0, tail.length - 4096))))
          return { ok: false, message: MEDIA_MESSAGES.polyglot };
        return indexOf(tail.subarray(Math.max(0, tail.length - 2048)), ascii('%%EOF')) >= 0 ? 'pdf' : truncated('pdf');
      }
      case 'zip':
      case 'docx':
      case 'xlsx':
      case 'pptx':
        return this.zipFormat(tail);
      case 'text':
      default:
        if (this.sawNul)
          return {
            ok: false,
            message: isProbablyBinary(head) ? MEDIA_MESSAGES.unsupported : MEDIA_MESSAGES.textBinary,
          };
        if (!this.validUtf8) return { ok: false, message: MEDIA_MESSAGES.textNotUtf8 };
        if (holdsHtml(head) && startsLikeMarkup(head)) return { ok: false, message: MEDIA_MESSAGES.webPage };
        return 'txt';
    }
  }

  private zipFormat(tail: Uint8Array): MediaFormat | Extract<SniffResult, { ok: false }> {
    const entries = zipEntries(tail, this.total);
    if (entries === 'unreadable') return { ok: false, message: MEDIA_MESSAGES.zipUnreadable };
    if (entries === 'bomb') return { ok: false, message: MEDIA_MESSAGES.zipBomb };
    let unpacked = 0;
    for (const e of entries) {
      unpacked += e.unpacked;
      if (
        e.name.startsWith('/') ||
        e.name.startsWith('\\') ||
        /(^|[\\/])\.\.([\\/]|$)/.test(e.name) ||
        /^[a-z]:/i.test(e.name)
      )
        return { ok: false, message: MEDIA_MESSAGES.zipUnsafeName };
    }
    if (unpacked > MEDIA_LIMITS.zipMaxUnpackedBytes || unpacked > Math.max(this.total, 1) * MEDIA_LIMITS.zipMaxRatio)
      return { ok: false, message: MEDIA_MESSAGES.zipBomb };
    if (entries.some((e) => e.name === '[Content_Types].xml')) {
      for (const [folder, format] of OFFICE_FOLDERS) if (entries.some((e) => e.name.startsWith(folder))) return format;
    }
    return 'zip';
  }
}

function readSize32(h: readonly number[]): number {
  return h[0]! * 2 ** 24 + h[1]! * 2 ** 16 + h[2]! * 2 ** 8 + h[3]!;
}

/** Many control bytes in the first kilobyte: a binary file of a type we do not send. */
function isProbablyBinary(head: Uint8Array): boolean {
  let control = 0;
  const sample = head.subarray(0, 1024);
  for (const b of sample) if (b < 0x09 || (b > 0x0d && b < 0x20)) control++;
  return control > sample.length / 10;
}

/** The lower-case ending of a file name (`photo.JPG` → `jpg`); undefined when it has none. */
export function extensionOf(fileName: string): string | undefined {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 && dot < fileName.length - 1 ? fileName.slice(dot + 1).toLowerCase() : undefined;
}

/** Why a file name cannot be kept (empty, a path, control characters, too long); undefined when it can. */
export function fileNameIssue(name: string | undefined): string | undefined {
  if (name === undefined || name.trim() === '') return MEDIA_MESSAGES.noName;
  if (/[\\/]/.test(name) || name === '.' || name === '..') return MEDIA_MESSAGES.nameHasPath;
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  if (/[\u0000-\u001f\u007f]/.test(name) || /\p{Cs}/u.test(name)) return MEDIA_MESSAGES.nameInvalid;
  if (name.length > MEDIA_LIMITS.fileNameMaxLength) return MEDIA_MESSAGES.nameTooLong;
  return undefined;
}
