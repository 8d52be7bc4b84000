export * from './rpc.js';
