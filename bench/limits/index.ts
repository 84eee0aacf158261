// The limits as a library, for benchmarks that divide their figures by limits measured in their own run.
export * from './measure-limits.js';
export * from './registry.js';
