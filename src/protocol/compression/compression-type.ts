// The codec ids of Kafka's batch and message attributes (the low three bits), and their names as Kafka's
// `compression.type` configuration spells them. Ids 5 to 7 are unassigned; a batch that carries one is answered
// with UNSUPPORTED_COMPRESSION_TYPE.

export const CompressionType = {
  None: 0,
  Gzip: 1,
  Snappy: 2,
  Lz4: 3,
  Zstd: 4,
} as const;
export type CompressionType = (typeof CompressionType)[keyof typeof CompressionType];

const NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type CompressionName = (typeof NAMES)[number];

export function isCompressionType(id: number): id is CompressionType {
  return Number.isInteger(id) && id >= 0 && id < NAMES.length;
}

export function compressionName(type: CompressionType): CompressionName {
  return NAMES[type]!;
}

/** Parses a topic's or producer's `compression.type` value; `producer` means "keep what the producer sent". */
export function compressionTypeFromName(name: string): CompressionType | undefined {
  const id = NAMES.indexOf(name.toLowerCase() as CompressionName);
  return id < 0 ? undefined : (id as CompressionType);
}
