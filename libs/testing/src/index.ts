export * from './process.js';
export * from './infra.js';
export * from './services.js';
export * from './auth.js';
export * from './http.js';
export * from './simulator.js';
export * from './in-process.js';
export * as mediaFiles from './media-files.js';
