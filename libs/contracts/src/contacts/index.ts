export * from './limits.js';
export * from './errors.js';
export * from './messages.js';
export * from './schemas.js';
export * from './types.js';
export * from './rpc.js';
export * from './fallbacks.js';
export * from './export.js';
