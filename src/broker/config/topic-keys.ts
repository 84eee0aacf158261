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
    'delete, compact, or both: what happens to old segments.',
    [synonym('log.cleanup.policy')],
    {
      validator: listOf(CLEANUP_POLICIES),
    },
  ),
  topicKey(
    'compression.type',
    T.STRING,
    'producer',
    "Codec batches are stored with; producer keeps the producer's codec.",
    [synonym('compression.type')],
    {
      validator: oneOf(COMPRESSION_TYPES),
    },
  ),
  topicKey(
    'compression.gzip.level',
    T.INT,
    '-1',
    'gzip level when recompressing.',
    [synonym('compression.gzip.level')],
    {
      validator: betweenOrExactly(1, 9, -1),
    },
  ),
  topicKey(
    'compression.lz4.level',
    T.INT,
    '9',
    'lz4 level when recompressing.',
    [synonym('compression.lz4.level')],
    {
      validator: between(1, 17),
    },
  ),
  topicKey(
    'compression.zstd.level',
    T.INT,
    '3',
    'zstd level when recompressing.',
    [synonym('compression.zstd.level')],
    {
      validator: between(-131072, 22),
    },
  ),
  topicKey(
    'delete.retention.ms',
    T.LONG,
    '86400000',
    'How long tombstones survive compaction.',
    [synonym('log.cleaner.delete.retention.ms')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'file.delete.delay.ms',
    T.LONG,
    '60000',
    "Delay before a removed segment's files are deleted.",
    [synonym('log.segment.delete.delay.ms')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'flush.messages',
    T.LONG,
    LONG_MAX_TEXT,
    'Messages between two fsyncs of a partition.',
    [synonym('log.flush.interval.messages')],
    {
      validator: atLeast(1),
    },
  ),
  topicKey(
    'flush.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'Longest time appended data stays unsynced.',
    [synonym('log.flush.interval.ms'), synonym('log.flush.scheduler.interval.ms')],
    { validator: atLeast(0) },
  ),
  topicKey(
    'follower.replication.throttled.replicas',
    T.LIST,
    '',
    'partition:broker pairs (or *) whose follower fetches are throttled.',
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
    'Bytes of batches between two offset index entries.',
    [synonym('log.index.interval.bytes')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'leader.replication.throttled.replicas',
    T.LIST,
    '',
    'partition:broker pairs (or *) whose leader sends are throttled.',
    [],
    {
      support: 'honoured',
      validator: throttledReplicaList(),
    },
  ),
  topicKey(
    'max.compaction.lag.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'Oldest a record may get before its segment must be compacted.',
    [synonym('log.cleaner.max.compaction.lag.ms')],
    {
      validator: atLeast(1),
    },
  ),
  topicKey(
    'max.message.bytes',
    T.INT,
    '1048588',
    'Largest record batch accepted, after compression.',
    [synonym('message.max.bytes')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey('message.downconversion.enable', T.BOOLEAN, 'true', 'Convert batches for old fetch versions.', [
    synonym('log.message.downconversion.enable'),
  ]),
  topicKey(
    'message.format.version',
    T.STRING,
    '3.0-IV1',
    'Deprecated and ignored: batches are always stored in format v2.',
    [synonym('log.message.format.version')],
    {
      support: 'no-op',
    },
  ),
  topicKey(
    'message.timestamp.after.max.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'How far in the future a CreateTime timestamp may be.',
    [synonym('log.message.timestamp.after.max.ms')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'message.timestamp.before.max.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'How far in the past a CreateTime timestamp may be.',
    [synonym('log.message.timestamp.before.max.ms')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'message.timestamp.difference.max.ms',
    T.LONG,
    LONG_MAX_TEXT,
    'Deprecated: largest gap either way between a CreateTime timestamp and the broker clock.',
    [synonym('log.message.timestamp.difference.max.ms')],
    { validator: atLeast(0) },
  ),
  topicKey(
    'message.timestamp.type',
    T.STRING,
    'CreateTime',
    'CreateTime keeps the producer timestamp; LogAppendTime stamps the append time.',
    [synonym('log.message.timestamp.type')],
    {
      validator: oneOf(TIMESTAMP_TYPES),
    },
  ),
  topicKey(
    'min.cleanable.dirty.ratio',
    T.DOUBLE,
    '0.5',
    'Dirty share of the log above which it is compacted.',
    [synonym('log.cleaner.min.cleanable.ratio')],
    {
      validator: between(0, 1),
    },
  ),
  topicKey(
    'min.compaction.lag.ms',
    T.LONG,
    '0',
    'Youngest a record may be and still be compacted.',
    [synonym('log.cleaner.min.compaction.lag.ms')],
    {
      validator: atLeast(0),
    },
  ),
  topicKey(
    'min.insync.replicas',
    T.INT,
    '1',
    'With acks=all, the fewest in-sync replicas that must hold a write.',
    [synonym('min.insync.replicas')],
    {
      validator: atLeast(1),
    },
  ),
  topicKey('preallocate', T.BOOLEAN, 'false', 'Preallocate new segment files at full size.', [
    synonym('log.preallocate'),
  ]),
  // Brook's own: encryption at rest per topic (src/storage/encryption), defaulting to the broker-wide setting.
  topicKey(
    'brook.encryption.enable',
    T.BOOLEAN,
    'false',
    "Encrypt the topic's new segments at rest with the broker's key provider.",
    [synonym('brook.encryption.enable')],
  ),
  topicKey(
    'remote.storage.enable',
    T.BOOLEAN,
    'false',
    'Tiered storage; Brook has none, so only false is accepted.',
    [],
    {
      support: 'planned',
    },
  ),
  topicKey(
    'retention.bytes',
    T.LONG,
    '-1',
    'Partition size above which old segments are deleted; -1 means no bound.',
    [synonym('log.retention.bytes')],
  ),
  topicKey(
    'retention.ms',
    T.LONG,
    '604800000',
    'Age after which segments are deleted; -1 keeps them forever.',
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
    'Size at which a segment is rolled.',
    [synonym('log.segment.bytes')],
    {
      validator: atLeast(14),
    },
  ),
  topicKey(
    'segment.index.bytes',
    T.INT,
    '10485760',
    'Largest offset index per segment.',
    [synonym('log.index.size.max.bytes')],
    {
      validator: atLeast(4),
    },
  ),
  topicKey(
    'segment.jitter.ms',
    T.LONG,
    '0',
    'Random amount subtracted from segment.ms per segment.',
    [synonym('log.roll.jitter.ms'), synonym('log.roll.jitter.hours', scaledToMs(HOUR_MS, false))],
    { validator: atLeast(0) },
  ),
  topicKey(
    'segment.ms',
    T.LONG,
    '604800000',
    'Age at which a segment is rolled even if not full.',
    [synonym('log.roll.ms'), synonym('log.roll.hours', scaledToMs(HOUR_MS, false))],
    { validator: atLeast(1) },
  ),
  topicKey(
    'unclean.leader.election.enable',
    T.BOOLEAN,
    'false',
    'Allow an out-of-sync replica to become leader, losing data.',
    [synonym('unclean.leader.election.enable')],
  ),
];

export const TOPIC_KEYS: ReadonlyMap<string, TopicKeyDef> = new Map(
  TOPIC_KEY_LIST.map((def) => [def.name, def]),
);

export function findTopicKey(name: string): TopicKeyDef | undefined {
  return TOPIC_KEYS.get(name);
}
