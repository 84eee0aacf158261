// The configuration the storage engine reads, as plain typed objects with Kafka's defaults.
//
// LogConfig holds the topic-level settings (Kafka's topic config names, camelCased, units last); the broker's
// config parser (src/broker/config) produces it from server.properties and /config/topics. LogManagerConfig holds
// the broker-level settings that only the log manager uses. Every bound the engine relies on is here or in
// STORAGE_LIMITS, so there is one place to read them.

/** Kafka's Long.MAX_VALUE for "never": kept as the largest safe integer so that arithmetic stays exact. */
export const NEVER = Number.MAX_SAFE_INTEGER;

export type CleanupPolicy = 'delete' | 'compact' | 'compact,delete';
export type TimestampType = 'CreateTime' | 'LogAppendTime';

export interface LogConfig {
  /** segment.bytes: roll when the next append would take the active segment past this size. */
  segmentBytes: number;
  /** segment.ms: roll when the active segment's first batch is older than this. */
  segmentMs: number;
  /** segment.jitter.ms: a random amount in [0, jitter) subtracted from segmentMs per segment, to spread rolls. */
  segmentJitterMs: number;
  /** segment.index.bytes: preallocated size of .index and .timeindex; a full index rolls the segment. */
  segmentIndexBytes: number;
  /** index.interval.bytes: bytes of log between two sparse index entries. */
  indexIntervalBytes: number;
  /** retention.ms: segments whose newest timestamp is older than this are deleted (-1: keep forever). */
  retentionMs: number;
  /** retention.bytes: oldest segments are deleted while the log is larger than this (-1: no limit). */
  retentionBytes: number;
  /** flush.messages: fdatasync after this many appended records (NEVER: leave it to the OS). */
  flushMessages: number;
  /** flush.ms: fdatasync when the oldest unflushed append is older than this. */
  flushMs: number;
  /** file.delete.delay.ms: how long a deleted segment's files stay (renamed .deleted) for in-flight reads. */
  fileDeleteDelayMs: number;
  /** message.timestamp.type: used by the broker's validation; storage indexes whatever maxTimestamp says. */
  messageTimestampType: TimestampType;
  /** cleanup.policy: retention by time and size applies to 'delete' and 'compact,delete'. */
  cleanupPolicy: CleanupPolicy;
  /** max.message.bytes: largest batch the log accepts; recovery treats anything larger as corruption. */
  maxMessageBytes: number;
  /** preallocate: preallocate the .log file to segmentBytes (Kafka's default is false; so is ours). */
  preallocate: boolean;
  /** delete.retention.ms: how long a tombstone (or removable transaction marker) outlives its first cleaning. */
  deleteRetentionMs: number;
  /** min.cleanable.dirty.ratio: the dirty share of a compacted log above which it is cleaned. */
  minCleanableDirtyRatio: number;
  /** min.compaction.lag.ms: segments with records younger than this are not cleaned yet. */
  minCompactionLagMs: number;
  /**
   * max.compaction.lag.ms: a dirty segment older than this is cleaned whatever the dirty ratio; a compacted
   * topic's active segment rolls at this age when it is below segment.ms (maxSegmentMs).
   */
  maxCompactionLagMs: number;
  /**
   * Brook's own setting (no Kafka equivalent): resolve an append's `durable` promise only after the segment is
   * fdatasync'ed. Appends that arrive while a sync runs share the next one (group commit).
   */
  ackAfterFsync: boolean;
  /**
   * Brook's own setting (brook.log.flush.group.commit.max.delay.ms): with ackAfterFsync, how long a group
   * fdatasync waits for more appends to join it; 0 starts it in the next event loop turn.
   */
  groupCommitMaxDelayMs: number;
  /**
   * Brook's own setting (brook.encryption.enable, broker default and topic override): new segments are encrypted
   * with the log manager's key store (see encryption/). Segments keep the form they were written in.
   */
  encrypt: boolean;
}

export const DEFAULT_LOG_CONFIG: Readonly<LogConfig> = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 60 * 60 * 1000,
  segmentJitterMs: 0,
  segmentIndexBytes: 10 * 1024 * 1024,
  indexIntervalBytes: 4096,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  retentionBytes: -1,
  flushMessages: NEVER,
  flushMs: NEVER,
  fileDeleteDelayMs: 60_000,
  messageTimestampType: 'CreateTime',
  cleanupPolicy: 'delete',
  maxMessageBytes: 1024 * 1024 + 12,
  preallocate: false,
  deleteRetentionMs: 24 * 60 * 60 * 1000,
  minCleanableDirtyRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: NEVER,
  ackAfterFsync: false,
  groupCommitMaxDelayMs: 0,
  encrypt: false,
});

export function logConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return { ...DEFAULT_LOG_CONFIG, ...overrides };
}

/**
 * The age at which the active segment rolls (Kafka's LogConfig.maxSegmentMs): segment.ms, or max.compaction.lag.ms
 * when the topic is compacted and the lag is shorter. The cleaner never touches the active segment, so without
 * the roll its records could stay uncompacted for up to segment.ms, past the lag the topic promises.
 */
export function maxSegmentMs(config: LogConfig): number {
  if (config.cleanupPolicy.includes('compact') && config.maxCompactionLagMs > 0) {
    return Math.min(config.maxCompactionLagMs, config.segmentMs);
  }
  return config.segmentMs;
}

export interface LogManagerConfig {
  /** log.retention.check.interval.ms: how often retention runs. */
  retentionCheckIntervalMs: number;
  /** log.flush.scheduler.interval.ms: how often flush.ms is checked (Kafka's default is never). */
  flushSchedulerIntervalMs: number;
  /** log.flush.offset.checkpoint.interval.ms: how often recovery points are checkpointed. */
  flushOffsetCheckpointIntervalMs: number;
  /** log.flush.start.offset.checkpoint.interval.ms: how often log start offsets are checkpointed. */
  flushStartOffsetCheckpointIntervalMs: number;
  /** replica.high.watermark.checkpoint.interval.ms: how often high watermarks are checkpointed. */
  highWatermarkCheckpointIntervalMs: number;
  /** producer.id.expiration.ms: idle producers are forgotten after this. */
  producerIdExpirationMs: number;
  /** producer.id.expiration.check.interval.ms */
  producerIdExpirationCheckIntervalMs: number;
  /** log.cleaner.enable: compact logs whose cleanup.policy includes compact. */
  cleanerEnable: boolean;
  /** log.cleaner.threads: cleanings that may run at once (async tasks here; 0 disables the cleaner). */
  cleanerThreads: number;
  /** log.cleaner.dedupe.buffer.size: offset map memory, shared by the concurrent cleanings. */
  cleanerDedupeBufferBytes: number;
  /** log.cleaner.io.buffer.size: read and write chunk memory, shared by the concurrent cleanings. */
  cleanerIoBufferBytes: number;
  /** log.cleaner.io.buffer.load.factor: how full the offset map may get. */
  cleanerIoBufferLoadFactor: number;
  /** log.cleaner.backoff.ms: pause when no log needs cleaning. */
  cleanerBackoffMs: number;
  /** brook.log.tail.cache.bytes: memory all logs' tail caches may keep alive together (0: no cache). */
  tailCacheBytes: number;
  /** brook.log.append.inline.enable: appends that find their log's queue idle are written on the event loop. */
  appendInlineEnable: boolean;
  /** brook.log.read.inline.max.bytes: the largest file read of a fetch run on the event loop (one per fetch). */
  readInlineMaxBytes: number;
  /** log.cleaner.io.max.bytes.per.second: read plus write rate of the cleaner (Number.MAX_VALUE: unthrottled). */
  cleanerIoMaxBytesPerSecond: number;
}

export const DEFAULT_LOG_MANAGER_CONFIG: Readonly<LogManagerConfig> = Object.freeze({
  retentionCheckIntervalMs: 300_000,
  flushSchedulerIntervalMs: NEVER,
  flushOffsetCheckpointIntervalMs: 60_000,
  flushStartOffsetCheckpointIntervalMs: 60_000,
  highWatermarkCheckpointIntervalMs: 5_000,
  producerIdExpirationMs: 86_400_000,
  producerIdExpirationCheckIntervalMs: 600_000,
  cleanerEnable: true,
  cleanerThreads: 1,
  cleanerDedupeBufferBytes: 128 * 1024 * 1024,
  cleanerIoBufferBytes: 512 * 1024,
  cleanerIoBufferLoadFactor: 0.9,
  cleanerBackoffMs: 15_000,
  tailCacheBytes: 32 * 1024 * 1024,
  appendInlineEnable: false,
  readInlineMaxBytes: 1024 * 1024,
  // Kafka's default, Double.MaxValue.
  cleanerIoMaxBytesPerSecond: Number.MAX_VALUE,
});

/** Bounds that are not configuration: they protect the engine from damaged files and runaway state. */
export const STORAGE_LIMITS = Object.freeze({
  /** A batch claiming more bytes than this is corrupt, whatever max.message.bytes says (recovery reads it whole). */
  batchBytesMax: 64 * 1024 * 1024,
  /** Producer ids remembered per partition; the least recently used beyond this are dropped (Kafka has none). */
  producerIdsPerPartitionMax: 100_000,
  /** Batches remembered per producer for duplicate detection (Kafka's NUM_BATCHES_TO_RETAIN). */
  batchesPerProducer: 5,
  /** Entries of an index kept in memory: the warm tail, as in Kafka's index lookups (8 KiB). */
  indexWarmBytes: 8192,
  /**
   * Bytes of queued appends per log not yet written to the file. An append that would pass it first completes
   * the queue synchronously, so a producer that does not wait for answers (acks=0) is slowed, not buffered.
   */
  queuedAppendBytesMax: 16 * 1024 * 1024,
  /** Largest append written at once on the event loop when nothing is queued (Kafka's max.request.size). */
  inlineWriteBytesMax: 1024 * 1024,
  /** inlineWriteSlowRun inline writes in a row slower than this send appends to the queue for inlineWritePauseMs. */
  inlineWriteSlowMs: 20,
  inlineWriteSlowRun: 3,
  inlineWritePauseMs: 1000,
  /** Queued appends gathered into one writev (the kernel's IOV_MAX is 1024). */
  appendsPerWriteMax: 1024,
  /** Largest checkpoint file read back; a larger one is damaged. */
  checkpointBytesMax: 64 * 1024 * 1024,
  /** Largest .snapshot file read back. */
  snapshotBytesMax: 256 * 1024 * 1024,
  /** Bytes read per system call when scanning batch headers or index files. */
  scanChunkBytes: 64 * 1024,
});
