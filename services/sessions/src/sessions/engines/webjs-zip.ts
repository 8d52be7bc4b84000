import { createRequire } from 'node:module';

// unzipper is whatsapp-web.js's own dependency (RemoteAuth needs it); load the very copy it uses.
const requireFromWwebjs = createRequire(createRequire(import.meta.url).resolve('whatsapp-web.js'));

interface ZipEntry {
  path: string;
  type: 'File' | 'Directory';
}
export const unzipper = requireFromWwebjs('unzipper') as {
  Open: {
    file(
      path: string,
    ): Promise<{ files: ZipEntry[]; extract(opts: { path: string; concurrency?: number }): Promise<unknown> }>;
  };
};

/**
 * What a RemoteAuth profile zip must hold to restore a login: files under both `Default/IndexedDB` and
 * `Default/Local Storage`. A profile zipped after a logout (114 bytes, a valid header, no files) or
 * before the browser wrote its login would restore nothing and overwrite a good backup.
 */
export const REQUIRED_PROFILE_FOLDERS = ['Default/IndexedDB/', 'Default/Local Storage/'] as const;

/** Undefined when the zip holds a restorable profile; otherwise what is wrong with it. */
export async function profileZipProblem(zipPath: string): Promise<string | undefined> {
  let files: ZipEntry[];
  try {
    files = (await unzipper.Open.file(zipPath)).files;
  } catch {
    return 'backup is not a readable zip file';
  }
  const missing = REQUIRED_PROFILE_FOLDERS.filter(
    (folder) => !files.some((f) => f.type === 'File' && f.path.replace(/\\/g, '/').startsWith(folder)),
  );
  return missing.length === 0 ? undefined : `backup has no files under ${missing.join(' and ')}`;
}
