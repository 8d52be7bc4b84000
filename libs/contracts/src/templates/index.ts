export * from './types.js';
export * from './rpc.js';
export * from './errors.js';
export * from './messages.js';
export * from './validation.js';
export * from './schemas.js';
