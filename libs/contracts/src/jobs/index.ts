export * from './types.js';
export * from './errors.js';
export * from './messages.js';
export * from './validation.js';
export * from './rpc.js';
