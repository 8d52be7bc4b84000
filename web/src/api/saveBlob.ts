/**
 * Saves a file the page holds (a download fetched with the bearer token, or one made in the browser)
 * under `fileName`, through a link clicked once; its object URL is let go a little later, once the
 * browser has started the download.
 */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
