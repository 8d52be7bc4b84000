export * from './types.js';
export * from './rpc.js';
export * from './messages.js';
export * from './schemas.js';
