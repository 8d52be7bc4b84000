export * from './types.js';
export * from './rpc.js';
export * from './validation.js';
export * from './schemas.js';
