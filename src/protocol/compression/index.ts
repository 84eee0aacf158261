// Public surface of the compression codecs.

export * from './codecs.js';
export * from './compression-error.js';
export * from './compression-type.js';
export { gzipCompress, gzipDecompress } from './gzip.js';
export { lz4Compress, lz4Decompress, scanLz4Frame } from './lz4.js';
export { snappyCompress, snappyCompressRaw, snappyDecompress } from './snappy.js';
export { xxhash32 } from './xxhash32.js';
export { zstdCompress, zstdDecompress } from './zstd.js';
