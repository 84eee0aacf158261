// Topic-level keys with Kafka's names, types, defaults and validation, each with the broker keys that supply
// its default ("synonyms", highest precedence first, as DescribeConfigs lists them) and how a synonym's value
// converts into the topic key's unit (log.retention.hours 168 -> retention.ms 604800000).

import { assert } from '../../common/assert.js';
import { CLEANUP_POLICIES, COMPRESSION_TYPES, TIMESTAMP_TYPES } from './broker-keys-log.js';
import type { ConfigKeyDef, ConfigValue } from './config-types.js';
import { ConfigType as T } from './config-types.js';
import { defineKey, type KeyOptions, LONG_MAX_TEXT } from './define-key.js';
import { atLeast, between, betweenOrExactly, listOf, oneOf, throttledReplicaList } from './validators.js';

export interface BrokerSynonym {
  readonly name: string;
  /** Turns the broker key's parsed value into the topic key's type and unit. */
  readonly toTopicValue: (value: ConfigValue) => ConfigValue;
}

export interface TopicKeyDef extends ConfigKeyDef {
  readonly synonyms: readonly BrokerSynonym[];
}

const same = (value: ConfigValue): ConfigValue => value;

function scaledToMs(factorMs: bigint, negativeMeansForever: boolean): (value: ConfigValue) => ConfigValue {
  return (value) => {
    if (value === null) return null;
    assert(typeof value === 'number' || typeof value === 'bigint', 'time synonym must be numeric');
    const ms = BigInt(value) * factorMs;
    // Kafka treats any negative retention as "keep forever" and reports it as -1.
    return negativeMeansForever && ms < 0n ? -1n : ms;
  };
}

function retentionMs(value: ConfigValue): ConfigValue {
  return typeof value === 'bigint' && value < 0n ? -1n : value;
}

const HOUR_MS = 3_600_000n;
const MINUTE_MS = 60_000n;

function synonym(name: string, toTopicValue: (value: ConfigValue) => ConfigValue = same): BrokerSynonym {
  return { name, toTopicValue };
}

function topicKey(
  name: string,
  type: ConfigKeyDef['type'],
  defaultValue: string | null,
  doc: string,
  synonyms: readonly BrokerSynonym[],
  options: KeyOptions = {},
): TopicKeyDef {
  // Every topic key can be altered per topic; the update mode only matters for broker keys.
  const def = defineKey(name, type, defaultValue, 'medium', doc, {
    updateMode: 'cluster-wide',
    support: 'honoured',
    ...options,
  });
  return { ...def, synonyms };
}

const TOPIC_KEY_LIST: readonly TopicKeyDef[] = [
  topicKey(
    'cleanup.policy',
    T.LIST,
    'delete',
    'Retention policy for old segments, a list of delete and compact: delete discards segments once ' +
      'retention.ms or retention.bytes is passed; compact keeps only the latest record of each key ' +
      '(log compaction); delete,compact discards expired segments and compacts the rest.',
    [synonym('log.cleanup.policy')],
    {
      validator: listOf(CLEANUP_POLICIES),
    },
  ),
  topicKey(
    'compression.type',
    T.STRING,
    'producer',
    "Final compression codec of the topic's batches: gzip, snappy, lz4 or zstd, uncompressed for " +
      'none, or producer to keep the codec each producer chose.',
    [synonym('compression.type')],
    {
      validator: oneOf(COMPRESSION_TYPES),
    },
  ),
  topicKey(
    'compression.gzip.level',
    T.INT,
    '-1',
    'Compression level used when compression.type is gzip: 1 (fastest) to 9 (smallest), or -1 for ' +
      'the codec default.',
    [synonym('compression.gzip.level')],
    {
      validator: betweenOrExactly(1, 9, -1),
    },
  ),
  topicKey(
    'compression.lz4.level',
    T.INT,
    '9',
    'Compression level used when compression.type is lz4: 1 to 17, where higher levels compress more ' +
      'and more slowly.',
    [synonym('compression.lz4.level')],
    {
      validator: between(1, 17),
    },
  ),
  topicKey(
    'compression.zstd.level',
    T.INT,
    '3',
    'Compression level used when compression.type is zstd: -131072 to 22, where higher levels ' +
      'compress more and more slowly and negative ones favour speed.',
    [synonym('compression.zstd.level')],
    {
      validator: between(-131072, 22),
    },
  ),
  topicKey(
    'delete.retention.ms',
    T.LONG,
    '86400000',
    'How long, in milliseconds, a tombstone (a record with a null value) stays in a compacted topic ' +
      'once compaction reaches it. A consumer reading from the start must finish within this time or ' +
      'it may miss deletions.',
    [synonym('log.cleaner.delete.retention.ms')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'file.delete.delay.ms',
    T.LONG,
    '60000',
    "How long, in milliseconds, a removed segment's files wait before they are deleted from the file " +
      'system.',
    [synonym('log.segment.delete.delay.ms')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'flush.messages',
    T.LONG,
    LONG_MAX_TEXT,
    'Number of records written to a partition after which its log is forced to disk (fsync); 1 syncs ' +
      'after every record. Kafka advises leaving it unset and relying on replication for durability.',
    [synonym('log.flush.interval.messages')],
    {
      validator: atLeast(1),
    },
  ),
  topicKey(
    'flush.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'Longest time, in milliseconds, written data may stay unsynced before the log is forced to disk ' +
      '(fsync). Kafka advises leaving it unset and relying on replication for durability.',
    [synonym('log.flush.interval.ms'), synonym('log.flush.scheduler.interval.ms')],
    { validator: atLeast(0) },
  ),
  topicKey(
    'follower.replication.throttled.replicas',
    T.LIST,
    '',
    'Replicas whose replication is throttled on the follower side: partitionId:brokerId pairs ' +
      'separated by commas, or * for every replica of the topic. The rate is the broker setting ' +
      'follower.replication.throttled.rate.',
    [],
    {
      support: 'honoured',
      validator: throttledReplicaList(),
    },
  ),
  topicKey(
    'index.interval.bytes',
    T.INT,
    '4096',
    'Bytes of record batches between two entries of the offset index: smaller values index more ' +
      'densely, so reads land closer to their offset, and make the indexes larger.',
    [synonym('log.index.interval.bytes')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'leader.replication.throttled.replicas',
    T.LIST,
    '',
    'Replicas whose replication is throttled on the leader side: partitionId:brokerId pairs ' +
      'separated by commas, or * for every replica of the topic. The rate is the broker setting ' +
      'leader.replication.throttled.rate.',
    [],
    {
      support: 'honoured',
      validator: throttledReplicaList(),
    },
  ),
  // Kafka's tiered storage keys (KIP-405; the last two KIP-950, Kafka 3.9). Brook has no tiered storage, like a
  // Kafka broker with remote.log.storage.system.enable=false: the keys are accepted with the values such a broker
  // accepts, stored and described, and change nothing (checkTopicRules in alter-validation.ts refuses the rest).
  // Their broker defaults (log.local.retention.ms/.bytes) are Kafka keys Brook does not define, so no synonyms.
  topicKey(
    'local.retention.bytes',
    T.LONG,
    '-2',
    'Tiered storage (KIP-405): the largest size, in bytes, the local part of a partition may reach before its ' +
      'oldest segments are deleted locally; -2 takes retention.bytes. Brook has no tiered storage: accepted, ' +
      'stored and described, with no effect.',
    [],
    { validator: atLeast(-2), support: 'no-op' },
  ),
  topicKey(
    'local.retention.ms',
    T.LONG,
    '-2',
    'Tiered storage (KIP-405): the longest time, in milliseconds, a segment is kept locally before it is ' +
      'deleted locally; -2 takes retention.ms. Brook has no tiered storage: accepted, stored and described, ' +
      'with no effect.',
    [],
    { validator: atLeast(-2), support: 'no-op' },
  ),
  topicKey(
    'max.compaction.lag.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'Longest time, in milliseconds, a record may stay ineligible for compaction: a log whose dirty ' +
      'records are older is compacted even below min.cleanable.dirty.ratio. Only for compacted topics.',
    [synonym('log.cleaner.max.compaction.lag.ms')],
    {
      validator: atLeast(1),
    },
  ),
  topicKey(
    'max.message.bytes',
    T.INT,
    '1048588',
    'Largest record batch, in bytes after compression, the topic accepts; a larger one is refused ' +
      'with MESSAGE_TOO_LARGE.',
    [synonym('message.max.bytes')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'message.downconversion.enable',
    T.BOOLEAN,
    'true',
    'Whether batches are converted down to the older message formats (magic 0 and 1) that old fetch ' +
      'versions need; when false such fetches get UNSUPPORTED_VERSION. Replication is not affected.',
    [synonym('log.message.downconversion.enable')],
  ),
  topicKey(
    'message.format.version',
    T.STRING,
    '3.0-IV1',
    'Deprecated since Kafka 3.0 and ignored: batches are always written in message format v2. Values ' +
      'such as 3.0-IV1 are accepted.',
    [synonym('log.message.format.version')],
    {
      support: 'no-op',
    },
  ),
  topicKey(
    'message.timestamp.after.max.ms',
    T.LONG,
    LONG_MAX_TEXT,
    "How far, in milliseconds, a record's timestamp may be ahead of the broker's clock when " +
      'message.timestamp.type is CreateTime; a batch beyond it is refused with INVALID_TIMESTAMP. ' +
      'Ignored with LogAppendTime.',
    [synonym('log.message.timestamp.after.max.ms')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'message.timestamp.before.max.ms',
    T.LONG,
    LONG_MAX_TEXT,
    "How far, in milliseconds, a record's timestamp may be behind the broker's clock when " +
      'message.timestamp.type is CreateTime; a batch beyond it is refused with INVALID_TIMESTAMP. ' +
      'Ignored with LogAppendTime.',
    [synonym('log.message.timestamp.before.max.ms')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'message.timestamp.difference.max.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'Deprecated (use message.timestamp.before.max.ms and message.timestamp.after.max.ms): largest ' +
      "difference, in milliseconds and either way, between a record's CreateTime timestamp and the " +
      "broker's clock, applied while those two are unbounded. Ignored with LogAppendTime.",
    [synonym('log.message.timestamp.difference.max.ms')],
    { validator: atLeast(0) },
  ),
  topicKey(
    'message.timestamp.type',
    T.STRING,
    'CreateTime',
    'Which timestamp records keep: CreateTime, the one the producer set, or LogAppendTime, the ' +
      "broker's time when it appends them.",
    [synonym('log.message.timestamp.type')],
    {
      validator: oneOf(TIMESTAMP_TYPES),
    },
  ),
  topicKey(
    'min.cleanable.dirty.ratio',
    T.DOUBLE,
    '0.5',
    'Share of the log, from 0 to 1, that must be dirty (not yet compacted) before the cleaner ' +
      'compacts it; lower values compact more often at more I/O. A log is also eligible once it has ' +
      'held dirty records for max.compaction.lag.ms, and records younger than min.compaction.lag.ms ' +
      'are never compacted.',
    [synonym('log.cleaner.min.cleanable.ratio')],
    {
      validator: between(0, 1),
    },
  ),
  topicKey(
    'min.compaction.lag.ms',
    T.LONG,
    '0',
    'Shortest time, in milliseconds, a record stays uncompacted after it is written. Only for ' +
      'compacted topics.',
    [synonym('log.cleaner.min.compaction.lag.ms')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'min.insync.replicas',
    T.INT,
    '1',
    'When a producer asks for acks=all (-1), the fewest in-sync replicas that must hold a write for ' +
      'it to succeed; with fewer in the ISR the write fails with NOT_ENOUGH_REPLICAS or ' +
      'NOT_ENOUGH_REPLICAS_AFTER_APPEND. Never more than the replicas assigned count (as in Kafka 3.7+): ' +
      'a topic with one replica takes acks=all under a minimum of 2.',
    [synonym('min.insync.replicas')],
    {
      validator: atLeast(1),
    },
  ),
  topicKey(
    'preallocate',
    T.BOOLEAN,
    'false',
    'Whether a new segment file is allocated on disk at its full size when it is created.',
    [synonym('log.preallocate')],
  ),
  // Brook's own: encryption at rest per topic (src/storage/encryption), defaulting to the broker-wide setting.
  topicKey(
    'brook.encryption.enable',
    T.BOOLEAN,
    'false',
    "Brook: whether the topic's new segments are encrypted at rest with the broker's key provider " +
      '(brook.encryption.key.provider).',
    [synonym('brook.encryption.enable')],
  ),
  topicKey(
    'remote.log.copy.disable',
    T.BOOLEAN,
    'false',
    'Tiered storage (KIP-950): true stops copying segments of a remote-storage topic to remote storage. ' +
      'Kafka refuses true in ZooKeeper mode, and so does Brook; false is accepted with no effect.',
    [],
    { support: 'no-op' },
  ),
  topicKey(
    'remote.log.delete.on.disable',
    T.BOOLEAN,
    'false',
    'Tiered storage (KIP-950): true deletes the remote data of a topic when remote.storage.enable is turned ' +
      'off. Kafka refuses true in ZooKeeper mode, and so does Brook; false is accepted with no effect.',
    [],
    { support: 'no-op' },
  ),
  topicKey(
    'remote.storage.enable',
    T.BOOLEAN,
    'false',
    'Tiered storage of the topic (KIP-405). Brook has no tiered storage, so only false is accepted, as a ' +
      'Kafka broker with remote.log.storage.system.enable=false accepts only false.',
    [],
    {
      support: 'planned',
    },
  ),
  topicKey(
    'retention.bytes',
    T.LONG,
    '-1',
    "Largest size, in bytes, a partition's log may reach under the delete policy before its oldest " +
      'segments are discarded; -1 sets no size limit. It counts per partition, so a topic may hold ' +
      'this times its partition count.',
    [synonym('log.retention.bytes')],
  ),
  topicKey(
    'retention.ms',
    T.LONG,
    '604800000',
    'Longest time, in milliseconds, a segment is kept under the delete policy before it is ' +
      'discarded, judged by the newest timestamp in it; -1 sets no time limit.',
    [
      synonym('log.retention.ms', retentionMs),
      synonym('log.retention.minutes', scaledToMs(MINUTE_MS, true)),
      synonym('log.retention.hours', scaledToMs(HOUR_MS, true)),
    ],
    { validator: atLeast(-1) },
  ),
  topicKey(
    'segment.bytes',
    T.INT,
    '1073741824',
    'Size, in bytes, at which the active segment file of a partition is closed and a new one ' +
      'started. Retention and compaction work on whole segments, so smaller segments give finer ' +
      'control and more files.',
    [synonym('log.segment.bytes')],
    {
      validator: atLeast(14),
    },
  ),
  topicKey(
    'segment.index.bytes',
    T.INT,
    '10485760',
    'Size, in bytes, of the offset index preallocated for each segment (the time index gets the same ' +
      'bound); a full index rolls the segment.',
    [synonym('log.index.size.max.bytes')],
    {
      validator: atLeast(4),
    },
  ),
  topicKey(
    'segment.jitter.ms',
    T.LONG,
    '0',
    'Largest random time, in milliseconds, taken off segment.ms for each segment, so that the ' +
      'segments of many partitions do not all roll at once.',
    [synonym('log.roll.jitter.ms'), synonym('log.roll.jitter.hours', scaledToMs(HOUR_MS, false))],
    { validator: atLeast(0) },
  ),
  topicKey(
    'segment.ms',
    T.LONG,
    '604800000',
    'Time, in milliseconds, after which the active segment is rolled even if it is not full, so that ' +
      'retention and compaction can reach its records.',
    [synonym('log.roll.ms'), synonym('log.roll.hours', scaledToMs(HOUR_MS, false))],
    { validator: atLeast(1) },
  ),
  topicKey(
    'unclean.leader.election.enable',
    T.BOOLEAN,
    'false',
    'Whether a replica outside the ISR may become leader when no in-sync replica is left: the ' +
      'partition comes back at the cost of the records that replica lacks.',
    [synonym('unclean.leader.election.enable')],
  ),
];

export const TOPIC_KEYS: ReadonlyMap<string, TopicKeyDef> = new Map(
  TOPIC_KEY_LIST.map((def) => [def.name, def]),
);

export function findTopicKey(name: string): TopicKeyDef | undefined {
  return TOPIC_KEYS.get(name);
}
