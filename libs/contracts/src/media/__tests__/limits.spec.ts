import { describe, expect, it } from '@jest/globals';
import { pdf } from '../../../../testing/src/media-files.js';
import { estimatedUploadSeconds, formatFileSize, MEDIA_LIMITS } from '../limits.js';
import { MEDIA_MESSAGES } from '../messages.js';
import { MediaSniffer } from '../sniff.js';

const MiB = 1024 * 1024;

describe('attachment sizes as people read them', () => {
  it('shows bytes, KB and MB (MB being MiB, as WhatsApp counts)', () => {
    expect(formatFileSize(1)).toBe('1 byte');
    expect(formatFileSize(820)).toBe('820 bytes');
    expect(formatFileSize(14 * 1024)).toBe('14 KB');
    expect(formatFileSize(1.5 * MiB)).toBe('1.5 MB');
    expect(formatFileSize(5 * MiB)).toBe('5 MB');
    expect(formatFileSize(64 * MiB)).toBe('64 MB');
  });

  it('estimates the one upload at the stated seconds per MB, rounded up', () => {
    expect(MEDIA_LIMITS.estimatedUploadSecondsPerMb).toBe(1);
    expect(estimatedUploadSeconds(1)).toBe(1);
    expect(estimatedUploadSeconds(5 * MiB)).toBe(5);
    expect(estimatedUploadSeconds(64 * MiB)).toBe(64);
  });

  it('names the kind when a file passes the upload cap and its format is known, else the upload', () => {
    const known = new MediaSniffer();
    // The format is decided once its first kilobytes are in.
    known.push(pdf('x'.repeat(8000)).subarray(0, 5000));
    expect(known.tooLargeRefusal()).toEqual({
      ok: false,
      tooLarge: true,
      message: MEDIA_MESSAGES.tooLarge('document'),
    });
    expect(new MediaSniffer().tooLargeRefusal()).toEqual({
      ok: false,
      tooLarge: true,
      message: MEDIA_MESSAGES.uploadTooLarge,
    });
  });
});
