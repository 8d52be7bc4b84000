export * from './types.js';
export * from './rpc.js';
