export * from './errors.js';
export * from './messages.js';
export * from './limits.js';
export * from './shard.js';
export * from './rpc.js';
export * from './events.js';
