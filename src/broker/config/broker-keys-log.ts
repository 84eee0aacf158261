// Broker keys for the log: directories, segments and rolling, retention, flushing, indexes, cleaning
// (compaction), timestamps and compression, and the broker-wide message and ISR limits. Many of them are the
// broker default of a topic-level key (see topic-keys.ts), which is why most are cluster-wide dynamic.
// Kafka 3.9 names, types, defaults and update modes; Brook's own doc lines.

import { ConfigType as T } from './config-types.js';
import { DOUBLE_MAX_TEXT, defineKey as key, LONG_MAX_TEXT } from './define-key.js';
import { atLeast, between, betweenOrExactly, listOf, oneOf } from './validators.js';

export const CLEANUP_POLICIES = ['compact', 'delete'] as const;
export const COMPRESSION_TYPES = ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'] as const;
export const TIMESTAMP_TYPES = ['CreateTime', 'LogAppendTime'] as const;

/** Smallest segment Kafka 3.9 allows: the overhead of one legacy v0 record. */
const SEGMENT_BYTES_MIN = 14;

const dynamic = { updateMode: 'cluster-wide', support: 'honoured' } as const;
// Kafka's DynamicLogConfig makes only the first broker synonym of a topic key dynamic (log.retention.ms,
// log.roll.ms, log.roll.jitter.ms, log.flush.interval.ms): the later ones (hours, minutes, the flush scheduler
// interval) are read-only, honoured from the static config and refused by AlterConfigs.
const staticSynonym = { support: 'honoured' } as const;

export const LOG_KEYS = [
  key(
    'log.dir',
    T.STRING,
    '/tmp/kafka-logs',
    'high',
    'Directory for partition data, used when log.dirs is not set.',
    {
      support: 'honoured',
    },
  ),
  key(
    'log.dirs',
    T.STRING,
    null,
    'high',
    'Comma-separated directories for partition data; when unset, log.dir is used.',
    {
      support: 'honoured',
    },
  ),
  key(
    'num.partitions',
    T.INT,
    '1',
    'medium',
    'Number of partitions of a topic created without a count (auto-created topics, CreateTopics with ' +
      '-1).',
    {
      validator: atLeast(1),
      support: 'honoured',
    },
  ),
  key(
    'log.segment.bytes',
    T.INT,
    '1073741824',
    'high',
    'Largest size, in bytes, of one segment file; the default of the topic setting segment.bytes.',
    {
      validator: atLeast(SEGMENT_BYTES_MIN),
      ...dynamic,
    },
  ),
  key(
    'log.roll.ms',
    T.LONG,
    null,
    'high',
    'Time, in milliseconds, after which a new segment is rolled even if the active one is not full; ' +
      'when unset, log.roll.hours is used. The default of segment.ms.',
    dynamic,
  ),
  key(
    'log.roll.hours',
    T.INT,
    '168',
    'high',
    'Time, in hours, after which a new segment is rolled even if the active one is not full; used ' +
      'when log.roll.ms is not set.',
    {
      validator: atLeast(1),
      ...staticSynonym,
    },
  ),
  key(
    'log.roll.jitter.ms',
    T.LONG,
    null,
    'high',
    'Largest random time, in milliseconds, taken off the roll time of each segment; when unset, ' +
      'log.roll.jitter.hours is used. The default of segment.jitter.ms.',
    dynamic,
  ),
  key(
    'log.roll.jitter.hours',
    T.INT,
    '0',
    'high',
    'Largest random time, in hours, taken off the roll time of each segment; used when ' +
      'log.roll.jitter.ms is not set.',
    {
      validator: atLeast(0),
      ...staticSynonym,
    },
  ),
  key(
    'log.retention.ms',
    T.LONG,
    null,
    'high',
    'Time, in milliseconds, a segment is kept before it is deleted; -1 sets no time limit. When ' +
      'unset, log.retention.minutes is used, then log.retention.hours. The default of retention.ms.',
    dynamic,
  ),
  key(
    'log.retention.minutes',
    T.INT,
    null,
    'high',
    'Time, in minutes, a segment is kept before it is deleted; used when log.retention.ms is not ' +
      'set, and before log.retention.hours.',
    staticSynonym,
  ),
  key(
    'log.retention.hours',
    T.INT,
    '168',
    'high',
    'Time, in hours, a segment is kept before it is deleted; used when neither log.retention.ms nor ' +
      'log.retention.minutes is set.',
    staticSynonym,
  ),
  key(
    'log.retention.bytes',
    T.LONG,
    '-1',
    'high',
    "Largest size, in bytes, of a partition's log before its oldest segments are deleted; -1 sets no " +
      'size limit. The default of retention.bytes.',
    dynamic,
  ),
  key(
    'log.retention.check.interval.ms',
    T.LONG,
    '300000',
    'medium',
    'How often, in milliseconds, the broker looks for segments that retention allows it to delete.',
    {
      validator: atLeast(1),
      support: 'honoured',
    },
  ),
  key(
    'log.cleanup.policy',
    T.LIST,
    'delete',
    'medium',
    'Default retention policy for old segments, a list of delete and compact: delete removes ' +
      'segments past retention, compact keeps the latest record of each key, both do both. The default ' +
      'of cleanup.policy.',
    {
      validator: listOf(CLEANUP_POLICIES),
      ...dynamic,
    },
  ),
  key(
    'log.index.size.max.bytes',
    T.INT,
    '10485760',
    'medium',
    "Largest size, in bytes, of a segment's offset index (and time index); a full index rolls the " +
      'segment.',
    {
      validator: atLeast(4),
      ...dynamic,
    },
  ),
  key(
    'log.index.interval.bytes',
    T.INT,
    '4096',
    'medium',
    'Bytes of record batches between two entries of the offset index; the default of ' +
      'index.interval.bytes.',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.flush.interval.messages',
    T.LONG,
    LONG_MAX_TEXT,
    'high',
    'Number of records a partition takes before its log is forced to disk (fsync); the default of ' +
      'flush.messages.',
    {
      validator: atLeast(1),
      ...dynamic,
    },
  ),
  key(
    'log.flush.interval.ms',
    T.LONG,
    null,
    'high',
    'Longest time, in milliseconds, a record may stay in memory before its log is forced to disk; ' +
      'when unset, log.flush.scheduler.interval.ms is used. The default of flush.ms.',
    dynamic,
  ),
  key(
    'log.flush.scheduler.interval.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'high',
    'How often, in milliseconds, the flusher checks whether any log is due to be forced to disk.',
    staticSynonym,
  ),
  key(
    'log.flush.offset.checkpoint.interval.ms',
    T.INT,
    '60000',
    'high',
    'How often, in milliseconds, the recovery point of each log (the offset up to which it is on ' +
      'disk) is written to the recovery checkpoint file.',
    {
      validator: atLeast(0),
      support: 'honoured',
    },
  ),
  key(
    'log.flush.start.offset.checkpoint.interval.ms',
    T.INT,
    '60000',
    'high',
    "How often, in milliseconds, each log's start offset is written to the log start offset " +
      'checkpoint file.',
    {
      validator: atLeast(0),
      support: 'honoured',
    },
  ),
  key(
    'log.segment.delete.delay.ms',
    T.LONG,
    '60000',
    'high',
    'How long, in milliseconds, a segment removed from the log waits before its files are deleted; ' +
      'the default of file.delete.delay.ms.',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.preallocate',
    T.BOOLEAN,
    'false',
    'medium',
    'Whether new segment files are allocated on disk at full size when created; the default of ' +
      'preallocate.',
    dynamic,
  ),
  key(
    'num.recovery.threads.per.data.dir',
    T.INT,
    '1',
    'high',
    'Threads per log directory Kafka uses to recover logs at startup and flush them at shutdown; ' +
      'accepted and ignored by Brook, which recovers with asynchronous I/O.',
    {
      validator: atLeast(1),
      updateMode: 'cluster-wide',
      support: 'no-op',
    },
  ),
  key(
    'log.message.timestamp.type',
    T.STRING,
    'CreateTime',
    'medium',
    "Default of message.timestamp.type: CreateTime keeps the producer's timestamp, LogAppendTime " +
      "replaces it with the broker's time at append.",
    {
      validator: oneOf(TIMESTAMP_TYPES),
      ...dynamic,
    },
  ),
  key(
    'log.message.timestamp.difference.max.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'medium',
    'Deprecated (use the .before.max.ms and .after.max.ms keys): largest difference, in milliseconds ' +
      "and either way, between a record's CreateTime timestamp and the broker's clock, applied while " +
      'those two are unbounded. Ignored with LogAppendTime.',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.message.timestamp.before.max.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'medium',
    "How far, in milliseconds, a record's CreateTime timestamp may be behind the broker's clock " +
      'before its batch is refused; the default of message.timestamp.before.max.ms. Ignored with ' +
      'LogAppendTime.',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.message.timestamp.after.max.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'medium',
    "How far, in milliseconds, a record's CreateTime timestamp may be ahead of the broker's clock " +
      'before its batch is refused; the default of message.timestamp.after.max.ms. Ignored with ' +
      'LogAppendTime.',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.message.downconversion.enable',
    T.BOOLEAN,
    'true',
    'low',
    'Whether batches are converted down to message format 0 or 1 for old fetch versions; when false ' +
      'those fetches get UNSUPPORTED_VERSION. The default of message.downconversion.enable.',
    dynamic,
  ),
  key(
    'log.message.format.version',
    T.STRING,
    '3.0-IV1',
    'medium',
    'Deprecated since Kafka 3.0 and ignored: batches are always written in message format v2.',
    {
      support: 'no-op',
    },
  ),
  key(
    'message.max.bytes',
    T.INT,
    '1048588',
    'high',
    'Largest record batch, in bytes after compression, the broker accepts; the default of the topic ' +
      'setting max.message.bytes.',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'compression.type',
    T.STRING,
    'producer',
    'high',
    'Default compression codec of topics: gzip, snappy, lz4 or zstd, uncompressed for none, or ' +
      "producer to keep the producer's codec.",
    {
      validator: oneOf(COMPRESSION_TYPES),
      ...dynamic,
    },
  ),
  key(
    'compression.gzip.level',
    T.INT,
    '-1',
    'medium',
    'Default gzip level when the broker compresses with gzip: 1 (fastest) to 9 (smallest), or -1 for ' +
      'the codec default.',
    {
      validator: betweenOrExactly(1, 9, -1),
      ...dynamic,
    },
  ),
  key(
    'compression.lz4.level',
    T.INT,
    '9',
    'medium',
    'Default lz4 level when the broker compresses with lz4: 1 to 17, higher compressing more and ' +
      'more slowly.',
    {
      validator: between(1, 17),
      ...dynamic,
    },
  ),
  key(
    'compression.zstd.level',
    T.INT,
    '3',
    'medium',
    'Default zstd level when the broker compresses with zstd: -131072 to 22, higher compressing more ' +
      'and more slowly.',
    {
      validator: between(-131072, 22),
      ...dynamic,
    },
  ),
  key(
    'min.insync.replicas',
    T.INT,
    '1',
    'high',
    'When a producer asks for acks=all (-1), the fewest in-sync replicas that must hold a write; ' +
      "with fewer the write fails with NOT_ENOUGH_REPLICAS. Never more than a partition's replicas count " +
      '(as in Kafka 3.7+). The default of the topic setting.',
    {
      validator: atLeast(1),
      ...dynamic,
    },
  ),
  key(
    'unclean.leader.election.enable',
    T.BOOLEAN,
    'false',
    'high',
    'Whether a replica outside the ISR may become leader when no in-sync replica is left, at the ' +
      'cost of the records it lacks. The default of the topic setting.',
    dynamic,
  ),

  // Log cleaner (compaction).
  key(
    'log.cleaner.enable',
    T.BOOLEAN,
    'true',
    'medium',
    'Whether the log cleaner runs. Compacted topics, __consumer_offsets among them, are compacted ' +
      'only when it does; without it they grow without bound.',
    {
      support: 'honoured',
    },
  ),
  key(
    'log.cleaner.threads',
    T.INT,
    '1',
    'medium',
    'Number of logs that may be cleaned at once (background threads in Kafka, concurrent tasks in ' +
      'Brook).',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.cleaner.io.max.bytes.per.second',
    T.DOUBLE,
    DOUBLE_MAX_TEXT,
    'medium',
    "Cap on the cleaner's disk I/O in bytes per second, reads and writes together.",
    dynamic,
  ),
  key(
    'log.cleaner.dedupe.buffer.size',
    T.LONG,
    '134217728',
    'medium',
    "Memory, in bytes, for the cleaner's map from key to latest offset, shared by all cleanings.",
    dynamic,
  ),
  key(
    'log.cleaner.io.buffer.size',
    T.INT,
    '524288',
    'medium',
    "Memory, in bytes, for the cleaner's read and write buffers, shared by all cleanings.",
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.cleaner.io.buffer.load.factor',
    T.DOUBLE,
    '0.9',
    'medium',
    "How full the cleaner's dedupe map may get, as a fraction: higher values clean more of a log per " +
      'pass at the cost of more hash collisions.',
    dynamic,
  ),
  key(
    'log.cleaner.backoff.ms',
    T.LONG,
    '15000',
    'medium',
    'How long, in milliseconds, the cleaner sleeps when no log needs cleaning.',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.cleaner.min.cleanable.ratio',
    T.DOUBLE,
    '0.5',
    'medium',
    'Share of a log, from 0 to 1, that must be dirty (not yet compacted) for the cleaner to take it; ' +
      'the default of min.cleanable.dirty.ratio.',
    {
      validator: between(0, 1),
      ...dynamic,
    },
  ),
  key(
    'log.cleaner.delete.retention.ms',
    T.LONG,
    '86400000',
    'medium',
    'How long, in milliseconds, tombstones are kept in compacted topics; the default of ' +
      'delete.retention.ms.',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.cleaner.min.compaction.lag.ms',
    T.LONG,
    '0',
    'medium',
    'Shortest time, in milliseconds, a record stays uncompacted; the default of min.compaction.lag.ms.',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.cleaner.max.compaction.lag.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'medium',
    'Longest time, in milliseconds, a record may stay ineligible for compaction; the default of ' +
      'max.compaction.lag.ms.',
    {
      validator: atLeast(1),
      ...dynamic,
    },
  ),

  // Policies, which in Kafka are Java plug-ins.
  key(
    'create.topic.policy.class.name',
    T.CLASS,
    null,
    'low',
    'Class Kafka calls to approve CreateTopics requests. Brook loads no Java plug-ins and refuses a ' +
      'value at startup.',
  ),
  key(
    'alter.config.policy.class.name',
    T.CLASS,
    null,
    'low',
    'Class Kafka calls to approve AlterConfigs requests. Brook loads no Java plug-ins and refuses a ' +
      'value at startup.',
  ),
];
