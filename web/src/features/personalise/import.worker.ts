import { createImportHandler, type ImportRequest } from './importCore.js';

// The contact file is read here, off the page's thread: a 20 MB file never freezes the tab.
const handle = createImportHandler((reply) => self.postMessage(reply));
self.onmessage = (e: MessageEvent<ImportRequest>) => void handle(e.data);
