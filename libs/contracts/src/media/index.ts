export * from './limits.js';
export * from './messages.js';
export * from './errors.js';
export * from './subjects.js';
export * from './schemas.js';
export * from './sniff.js';
export * from './rpc.js';
