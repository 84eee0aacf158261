// Public surface of record batches, records, control records and legacy message sets.

export * from './batch-builder.js';
export * from './batch-crc.js';
export * from './batch-fault.js';
export * from './batch-header.js';
export * from './batch-records.js';
export * from './control-record.js';
export * from './decode-records-blob.js';
export * from './legacy-convert.js';
export * from './legacy-message.js';
export * from './recompress.js';
export * from './record.js';
export * from './records-cursor.js';
export * from './validate-batch.js';
