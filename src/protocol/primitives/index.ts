export * from './decode-error.js';
export * from './reader.js';
export * from './writer.js';
