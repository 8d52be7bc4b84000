import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { Inject, Injectable, Logger } from '@nestjs/common';
import busboy from 'busboy';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, setSha256Backend, StorageType, type ObjectStore } from '@nats-io/obj';
import {
  ErrorKind,
  fileNameIssue,
  MEDIA_BUCKET,
  MEDIA_LIMITS,
  MEDIA_MESSAGES,
  MEDIA_UPLOAD_FIELD,
  MediaErrorCode,
  MediaSniffer,
  type MediaView,
  type SniffResult,
} from '@bns/contracts';
import { AppError, NATS_CONNECTION, RpcClient, SERVICE_ENV } from '@bns/service-kit';
import type { GatewayEnv } from '../config/env.js';

type Refused = Extract<SniffResult, { ok: false }>;

/** The sniffer's refusal, carried through the object store's stream so the put stops and cleans up. */
class UploadRefused extends Error {
  constructor(readonly refusal: Refused) {
    super(refusal.message);
  }
}

const refusalError = (r: Refused) =>
  r.tooLarge
    ? new AppError(ErrorKind.PayloadTooLarge, MediaErrorCode.TooLarge, r.message)
    : AppError.validation(MediaErrorCode.Invalid, r.message, { file: r.message });
const badUpload = (message: string) => AppError.validation(MediaErrorCode.BadUpload, message, { file: message });

/** Hashes and sniffs the bytes on their way to the object store; errors (stopping the put) on a refusal. */
class Inspect extends Transform {
  readonly sniffer = new MediaSniffer();
  private readonly hash = createHash('sha256');

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const refused = this.sniffer.push(chunk);
    if (refused) return done(new UploadRefused(refused));
    this.hash.update(chunk);
    done(null, chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}

/**
 * `POST /api/media`: one file in the multipart field `file`, streamed (never whole in memory) into the
 * JetStream object store while it is hashed and its real type sniffed from its bytes. A refusal comes as
 * soon as it is certain (a program, a web page, past the size cap) and removes what was stored; the
 * jobs service then records it, and the same bytes of the same user answer the first upload's id (the
 * second copy is deleted at once).
 */
@Injectable()
export class MediaUploads {
  private readonly logger = new Logger('MediaUploads');
  private bucket?: Promise<ObjectStore>;

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SERVICE_ENV) private readonly env: GatewayEnv,
  ) {
    setSha256Backend('native');
  }

  upload(userId: string, req: IncomingMessage): Promise<MediaView> {
    const type = String(req.headers['content-type'] ?? '').toLowerCase();
    if (!type.startsWith('multipart/form-data')) return Promise.reject(badUpload(MEDIA_MESSAGES.notMultipart));
    return new Promise<MediaView>((resolve, reject) => {
      let parser: busboy.Busboy;
      try {
        parser = busboy({
          headers: req.headers,
          // The name as the client sent it: a path in it is refused, not silently cut off.
          preservePath: true,
          defParamCharset: 'utf8',
          limits: { files: 2, fields: 10, parts: 12, fieldSize: 1024, fileSize: MEDIA_LIMITS.maxUploadBytes + 1 },
        });
      } catch {
        reject(badUpload(MEDIA_MESSAGES.notMultipart));
        return;
      }
      let stored: Promise<MediaView> | undefined;
      let files = 0;
      let settled = false;
      const finish = (err: unknown, media?: MediaView) => {
        if (settled) return;
        settled = true;
        if (err) {
          // Stop reading: the refusal answers now (lingerOnRefusal reads and drops the rest).
          req.unpipe(parser);
          reject(err);
        } else resolve(media!);
      };
      parser.on('file', (field, stream, info) => {
        files++;
        if (field !== MEDIA_UPLOAD_FIELD || files > 1) {
          stream.resume();
          if (files > 1) finish(badUpload(MEDIA_MESSAGES.moreThanOneFile));
          return;
        }
        const fileName = info.filename ?? '';
        const nameIssue = fileNameIssue(fileName);
        if (nameIssue) {
          stream.resume();
          finish(AppError.validation(MediaErrorCode.Invalid, nameIssue, { file: nameIssue }));
          return;
        }
        stored = this.storeFile(userId, stream, fileName);
        // A refusal answers at once; a success once the whole request was read (a second file is refused).
        stored.catch((err: unknown) => {
          stream.resume();
          finish(err);
        });
      });
      parser.on('close', () => {
        if (!stored) return finish(badUpload(MEDIA_MESSAGES.noFile));
        stored.then(
          (media) => finish(undefined, media),
          (err: unknown) => finish(err),
        );
      });
      parser.on('error', () => finish(badUpload(MEDIA_MESSAGES.notMultipart)));
      req.on('aborted', () => finish(badUpload(MEDIA_MESSAGES.notMultipart)));
      req.pipe(parser);
    });
  }

  get(userId: string, mediaId: string): Promise<MediaView> {
    return this.rpc.call('jobs.media.get', { userId, mediaId }).then((r) => r.media);
  }

  private async storeFile(userId: string, file: Readable, fileName: string): Promise<MediaView> {
    const inspect = new Inspect();
    const object = `upl_${randomUUID()}`;
    const store = await this.objectStore();
    // Past the upload's cap: said in the kind's words when the bytes so far tell the kind (a PDF: "Documents…").
    file.on('limit', () => inspect.destroy(new UploadRefused(inspect.sniffer.tooLargeRefusal())));
    file.pipe(inspect);
    try {
      await store.put({ name: object }, Readable.toWeb(inspect) as ReadableStream<Uint8Array>);
    } catch (err) {
      if (err instanceof UploadRefused) throw refusalError(err.refusal);
      this.bucket = undefined;
      if (/maximum bytes|insufficient resources|storage/i.test(String((err as Error)?.message))) {
        throw new AppError(ErrorKind.PayloadTooLarge, MediaErrorCode.StoreFull, MEDIA_MESSAGES.storeFull);
      }
      this.logger.warn({ err }, 'could not store an upload');
      throw AppError.unavailable();
    }
    const verdict = inspect.sniffer.finish(fileName);
    if (!verdict.ok) {
      await this.remove(store, object);
      throw refusalError(verdict);
    }
    try {
      const { media, created } = await this.rpc.call('jobs.media.register', {
        userId,
        object,
        kind: verdict.kind,
        mime: verdict.mime,
        sha256: inspect.digest(),
        size: inspect.sniffer.size,
        fileName,
      });
      // The user had these bytes stored already: that copy is the one kept.
      if (!created) await this.remove(store, object);
      return media;
    } catch (err) {
      await this.remove(store, object);
      throw err;
    }
  }

  private async remove(store: ObjectStore, object: string): Promise<void> {
    await store.delete(object).catch((err: unknown) => this.logger.warn({ err }, 'could not delete an upload'));
  }

  private objectStore(): Promise<ObjectStore> {
    this.bucket ??= new Objm(this.nc)
      .create(MEDIA_BUCKET, { storage: StorageType.File, max_bytes: this.env.MEDIA_BUCKET_MAX_BYTES })
      .catch(() => new Objm(this.nc).open(MEDIA_BUCKET))
      .catch((err: unknown) => {
        this.bucket = undefined;
        this.logger.warn({ err }, 'the attachments store is not available');
        throw AppError.unavailable();
      });
    return this.bucket;
  }
}
