import { describe, expect, it } from '@jest/globals';
import { BAD_MEDIA, expectedMessage, GOOD_MEDIA, jpeg, mp4, pdf } from '../../../../testing/src/media-files.js';
import { MEDIA_LIMITS } from '../limits.js';
import { MEDIA_MESSAGES } from '../messages.js';
import { fileNameIssue, MediaSniffer, type SniffResult } from '../sniff.js';

/** Pushes the bytes in chunks of `chunk` (as a socket would), then finishes. */
function sniff(bytes: Uint8Array, name: string, chunk = 1000): SniffResult {
  const sniffer = new MediaSniffer();
  for (let at = 0; at < bytes.length; at += chunk) {
    const refused = sniffer.push(bytes.subarray(at, at + chunk));
    if (refused) return refused;
  }
  return fileNameIssue(name) ? { ok: false, message: fileNameIssue(name)! } : sniffer.finish(name);
}

describe('MediaSniffer', () => {
  it.each(GOOD_MEDIA.map((g) => [g.name, g]))('accepts %s as what its bytes are', (_name, good) => {
    for (const chunk of [1, 7, 4096, 1 << 20]) {
      const result = sniff(good.bytes(), good.name, chunk);
      expect(result).toMatchObject({ ok: true, kind: good.kind });
    }
  });

  it.each(BAD_MEDIA.map((b) => [b.label, b]))('refuses %s with a plain reason', (_label, bad) => {
    const result = sniff(bad.bytes(), bad.name, 65536);
    expect(result).toEqual(expect.objectContaining({ ok: false, message: expectedMessage(MEDIA_MESSAGES, bad) }));
  });

  it('refuses an oversized image as soon as it passes the cap, before the rest arrives', () => {
    const sniffer = new MediaSniffer();
    expect(sniffer.push(jpeg(0).subarray(0, 20))).toBeUndefined();
    const megabyte = new Uint8Array(1 << 20);
    let refused;
    let pushed = 20;
    while (!refused && pushed < 10 * MEDIA_LIMITS.maxBytes.image) {
      refused = sniffer.push(megabyte);
      pushed += megabyte.length;
    }
    expect(refused).toEqual({ ok: false, tooLarge: true, message: MEDIA_MESSAGES.tooLarge('image') });
    expect(pushed).toBeLessThanOrEqual(MEDIA_LIMITS.maxBytes.image + (1 << 20) + 20);
  });

  it('accepts a file without an extension by its bytes, and keeps a CSV a CSV', () => {
    expect(sniff(pdf(), 'invoice')).toMatchObject({ ok: true, format: 'pdf' });
    expect(sniff(Buffer.from('a,b\n1,2\n'), 'x.csv')).toMatchObject({ ok: true, format: 'csv', kind: 'document' });
    expect(sniff(mp4(), 'clip.m4v')).toMatchObject({ ok: true, format: 'mp4', kind: 'video' });
  });

  it('names problems of the file name', () => {
    expect(fileNameIssue('')).toBe(MEDIA_MESSAGES.noName);
    expect(fileNameIssue('a/b.png')).toBe(MEDIA_MESSAGES.nameHasPath);
    expect(fileNameIssue('a\u0007.png')).toBe(MEDIA_MESSAGES.nameInvalid);
    expect(fileNameIssue('a'.repeat(201))).toBe(MEDIA_MESSAGES.nameTooLong);
    expect(fileNameIssue('Menu (June).pdf')).toBeUndefined();
  });
});
