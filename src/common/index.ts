export * from './assert.js';
export * from './clock.js';
export * from './deadline.js';
export * from './ids.js';
export * from './limits.js';
export * from './log-levels.js';
export * from './logger.js';
