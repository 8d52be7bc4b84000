export * from './errors.js';
export * from './limits.js';
export * from './messages.js';
export * from './subjects.js';
export * from './schemas.js';
export * from './types.js';
export * from './rpc.js';
export * from './audit.js';
