export * from './user-deletions.js';
export * from './account-data.js';
export * from './retention.js';
