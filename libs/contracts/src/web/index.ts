export * from './messages.js';
export * from './phone.js';
export * from './placeholders.js';
export * from './config.js';
export * from './files.js';
