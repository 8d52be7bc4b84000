import { createRequire } from 'node:module';
import { unlink } from 'node:fs/promises';
import wwebjs from 'whatsapp-web.js';

// unzipper is whatsapp-web.js's own dependency (RemoteAuth needs it); load the very copy it uses.
const requireFromWwebjs = createRequire(createRequire(import.meta.url).resolve('whatsapp-web.js'));
const unzipper = requireFromWwebjs('unzipper') as {
  Open: { file(path: string): Promise<{ extract(opts: { path: string; concurrency?: number }): Promise<unknown> }> };
};

/**
 * RemoteAuth with one fix. Its unCompressSession resolves on unzipper's Extract 'finish', which fires
 * before the files are written: Chromium then starts on a half-restored profile and the login is lost
 * (the "empty or corrupt session after restart" reports). Here extraction resolves only once every
 * file is closed on disk. Everything else is whatsapp-web.js's own code.
 */
export class SafeRemoteAuth extends wwebjs.RemoteAuth {
  async unCompressSession(compressedSessionPath: string): Promise<void> {
    const userDataDir = (this as unknown as { userDataDir: string }).userDataDir;
    const zip = await unzipper.Open.file(compressedSessionPath);
    await zip.extract({ path: userDataDir, concurrency: 5 });
    await unlink(compressedSessionPath);
  }
}
