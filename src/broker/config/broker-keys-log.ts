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

export const LOG_KEYS = [
  key(
    'log.dir',
    T.STRING,
    '/tmp/kafka-logs',
    'high',
    'Directory for partition data when log.dirs is not set.',
    {
      support: 'honoured',
    },
  ),
  key(
    'log.dirs',
    T.STRING,
    null,
    'high',
    'Comma-separated directories for partition data; takes precedence over log.dir.',
    {
      support: 'honoured',
    },
  ),
  key(
    'num.partitions',
    T.INT,
    '1',
    'medium',
    'Partition count of topics created without one (auto-created topics, CreateTopics with -1).',
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
    'Size at which a segment file is closed and a new one started.',
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
    'Age at which a segment is rolled even if not full; takes precedence over log.roll.hours.',
    dynamic,
  ),
  key(
    'log.roll.hours',
    T.INT,
    '168',
    'high',
    'Segment roll age in hours, used when log.roll.ms is not set.',
    {
      validator: atLeast(1),
      ...dynamic,
    },
  ),
  key(
    'log.roll.jitter.ms',
    T.LONG,
    null,
    'high',
    'Random amount subtracted from the roll age so segments do not all roll at once.',
    dynamic,
  ),
  key(
    'log.roll.jitter.hours',
    T.INT,
    '0',
    'high',
    'Roll jitter in hours, used when log.roll.jitter.ms is not set.',
    {
      validator: atLeast(0),
      ...dynamic,
    },
  ),
  key(
    'log.retention.ms',
    T.LONG,
    null,
    'high',
    'Age after which segments are deleted; -1 keeps them forever. Takes precedence over minutes and hours.',
    dynamic,
  ),
  key(
    'log.retention.minutes',
    T.INT,
    null,
    'high',
    'Retention age in minutes, used when log.retention.ms is not set.',
    dynamic,
  ),
  key(
    'log.retention.hours',
    T.INT,
    '168',
    'high',
    'Retention age in hours, used when neither log.retention.ms nor .minutes is set.',
    dynamic,
  ),
  key(
    'log.retention.bytes',
    T.LONG,
    '-1',
    'high',
    'Size per partition above which the oldest segments are deleted; -1 means no size bound.',
    dynamic,
  ),
  key(
    'log.retention.check.interval.ms',
    T.LONG,
    '300000',
    'medium',
    'How often the broker looks for segments to delete.',
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
    'What happens to old segments: delete, compact, or both.',
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
    'Largest offset index file per segment; a full index rolls the segment.',
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
    'Bytes of batches between two offset index entries.',
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
    'Messages appended to a partition before it is fsynced.',
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
    'Longest time appended data stays unsynced; defaults to log.flush.scheduler.interval.ms.',
    dynamic,
  ),
  key(
    'log.flush.scheduler.interval.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'high',
    'How often the flusher checks whether a partition is due for fsync.',
    dynamic,
  ),
  key(
    'log.flush.offset.checkpoint.interval.ms',
    T.INT,
    '60000',
    'high',
    'How often the recovery point checkpoint is written.',
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
    'How often the log start offset checkpoint is written.',
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
    'Delay between removing a segment from the log and deleting its files.',
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
    'Preallocate segment files at their full size when they are created.',
    dynamic,
  ),
  key(
    'num.recovery.threads.per.data.dir',
    T.INT,
    '1',
    'high',
    'Kafka recovery thread count per directory; Brook recovers with async I/O and ignores it.',
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
    'Keep the producer timestamp (CreateTime) or stamp the append time (LogAppendTime).',
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
    'Deprecated: largest gap between a CreateTime timestamp and the broker clock, either way.',
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
    'How far in the past a CreateTime timestamp may be.',
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
    'How far in the future a CreateTime timestamp may be.',
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
    'Convert batches to magic 0/1 for old fetch versions; when false those fetches get UNSUPPORTED_VERSION.',
    dynamic,
  ),
  key(
    'log.message.format.version',
    T.STRING,
    '3.0-IV1',
    'medium',
    'Deprecated and ignored: batches are always stored in format v2.',
    {
      support: 'no-op',
    },
  ),
  key(
    'message.max.bytes',
    T.INT,
    '1048588',
    'high',
    'Largest record batch the broker accepts, after compression.',
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
    'Codec batches are stored with; producer keeps the codec the producer chose.',
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
    'gzip level when the broker recompresses; -1 is the library default.',
    {
      validator: betweenOrExactly(1, 9, -1),
      ...dynamic,
    },
  ),
  key('compression.lz4.level', T.INT, '9', 'medium', 'lz4 level when the broker recompresses.', {
    validator: between(1, 17),
    ...dynamic,
  }),
  key('compression.zstd.level', T.INT, '3', 'medium', 'zstd level when the broker recompresses.', {
    validator: between(-131072, 22),
    ...dynamic,
  }),
  key(
    'min.insync.replicas',
    T.INT,
    '1',
    'high',
    'With acks=all, the fewest in-sync replicas that must hold a write; fewer gives NOT_ENOUGH_REPLICAS.',
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
    'Allow an out-of-sync replica to become leader when no in-sync one is left, losing data.',
    dynamic,
  ),

  // Log cleaner (compaction).
  key(
    'log.cleaner.enable',
    T.BOOLEAN,
    'true',
    'medium',
    'Run the log cleaner, needed by compacted topics such as __consumer_offsets.',
    {
      support: 'honoured',
    },
  ),
  key(
    'log.cleaner.threads',
    T.INT,
    '1',
    'medium',
    'Concurrent cleanings; Brook runs cleanings as async tasks up to this count.',
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
    'Bytes per second the cleaner may read and write together.',
    dynamic,
  ),
  key(
    'log.cleaner.dedupe.buffer.size',
    T.LONG,
    '134217728',
    'medium',
    'Memory for the key-to-offset map of all cleaner tasks together.',
    dynamic,
  ),
  key(
    'log.cleaner.io.buffer.size',
    T.INT,
    '524288',
    'medium',
    'I/O buffer memory for all cleaner tasks together.',
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
    'How full the dedupe map may get.',
    dynamic,
  ),
  key('log.cleaner.backoff.ms', T.LONG, '15000', 'medium', 'Pause when no log needs cleaning.', {
    validator: atLeast(0),
    ...dynamic,
  }),
  key(
    'log.cleaner.min.cleanable.ratio',
    T.DOUBLE,
    '0.5',
    'medium',
    'Dirty share of a log above which it is cleaned.',
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
    'How long tombstones are kept in compacted topics.',
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
    'Youngest a record may be and still be compacted.',
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
    'Oldest a record may get before its segment must be compacted.',
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
    'CreateTopics policy plug-in; Brook has no plug-ins and rejects a value at startup.',
  ),
  key(
    'alter.config.policy.class.name',
    T.CLASS,
    null,
    'low',
    'AlterConfigs policy plug-in; Brook has no plug-ins and rejects a value at startup.',
  ),
];
