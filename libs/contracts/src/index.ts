export * from './common/index.js';
export * from './sessions/index.js';
export * from './jobs/index.js';
export * from './templates/index.js';
export * from './dashboard/index.js';
export * from './integrations/index.js';
export * from './web/index.js';
export * from './registry/index.js';
