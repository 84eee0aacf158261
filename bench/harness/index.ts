// The benchmark harness: what every benchmark under bench/ uses to repeat, measure, record and report.
export * from './event-loop-delay.js';
export * from './histogram.js';
export * from './host-info.js';
export * from './options.js';
export * from './paired-rounds.js';
export * from './process-usage.js';
export * from './ratio.js';
export * from './repeat.js';
export * from './results.js';
export * from './step-throughput.js';
export * from './table.js';
export * from './temp-dir.js';
export * from './word-payloads.js';
export * from './writeback.js';
