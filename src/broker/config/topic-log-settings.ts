// The typed settings the storage engine and the produce path read for one topic, mapped from its effective
// config. Times are ms and sizes bytes, as numbers; -1 means unlimited where Kafka uses -1, and Kafka's
// Long.MAX_VALUE "never" defaults become Number.MAX_SAFE_INTEGER (see parsed-config.ts).
//
// src/storage/log-config.ts defines the storage engine's LogConfig, a subset of these fields under the same
// names; storage-log-config.ts converts. The other fields are read by the produce path, replication and the
// compactor.

import { assert } from '../../common/assert.js';
import { COMPRESSION_TYPES, TIMESTAMP_TYPES } from './broker-keys-log.js';
import type { BrokerConfigLayers } from './config-layers.js';
import type { ConfigValue } from './config-types.js';
import { LONG_AS_NUMBER_MAX, longToNumber } from './parsed-config.js';
import { type EffectiveTopicConfig, resolveTopicConfig } from './topic-config.js';

export type CleanupPolicy = 'compact' | 'delete';
export type CompressionType = (typeof COMPRESSION_TYPES)[number];
export type TimestampType = (typeof TIMESTAMP_TYPES)[number];

export interface TopicLogSettings {
  readonly segmentBytes: number;
  readonly segmentMs: number;
  readonly segmentJitterMs: number;
  readonly segmentIndexBytes: number;
  readonly indexIntervalBytes: number;
  /** -1: keep forever. */
  readonly retentionMs: number;
  /** -1: no size bound. */
  readonly retentionBytes: number;
  readonly flushMessages: number;
  readonly flushMs: number;
  readonly fileDeleteDelayMs: number;
  /** Empty means neither: segments are kept and never compacted. */
  readonly cleanupPolicy: readonly CleanupPolicy[];
  readonly deleteRetentionMs: number;
  readonly minCompactionLagMs: number;
  readonly maxCompactionLagMs: number;
  readonly minCleanableDirtyRatio: number;
  readonly maxMessageBytes: number;
  readonly messageTimestampType: TimestampType;
  /** Already folded with the deprecated message.timestamp.difference.max.ms, as Kafka does. */
  readonly messageTimestampBeforeMaxMs: number;
  readonly messageTimestampAfterMaxMs: number;
  readonly messageDownconversionEnable: boolean;
  readonly compressionType: CompressionType;
  readonly compressionGzipLevel: number;
  readonly compressionLz4Level: number;
  readonly compressionZstdLevel: number;
  readonly minInsyncReplicas: number;
  readonly uncleanLeaderElectionEnable: boolean;
  readonly preallocate: boolean;
  /** brook.encryption.enable: new segments of the topic are encrypted at rest. */
  readonly encryptionEnable: boolean;
}

function entryValue(config: EffectiveTopicConfig, name: string): ConfigValue {
  const entry = config.get(name);
  assert(entry !== undefined, `topic config ${name} is not resolved`);
  return entry.value;
}

function num(config: EffectiveTopicConfig, name: string): number {
  const v = entryValue(config, name);
  if (typeof v === 'bigint') return longToNumber(v);
  assert(typeof v === 'number', `topic config ${name} is not numeric`);
  return v;
}

function bool(config: EffectiveTopicConfig, name: string): boolean {
  const v = entryValue(config, name);
  assert(typeof v === 'boolean', `topic config ${name} is not a boolean`);
  return v;
}

function oneOfValues<T extends string>(config: EffectiveTopicConfig, name: string, allowed: readonly T[]): T {
  const v = entryValue(config, name);
  assert(
    typeof v === 'string' && (allowed as readonly string[]).includes(v),
    `topic config ${name} is invalid`,
  );
  return v as T;
}

/**
 * Kafka 3.6+ keeps the deprecated difference key working: a before/after bound left at its "unbounded"
 * default takes the difference bound instead.
 */
function timestampBound(config: EffectiveTopicConfig, name: string): number {
  const bound = num(config, name);
  return bound === LONG_AS_NUMBER_MAX ? num(config, 'message.timestamp.difference.max.ms') : bound;
}

export function toTopicLogSettings(config: EffectiveTopicConfig): TopicLogSettings {
  const cleanup = entryValue(config, 'cleanup.policy');
  assert(Array.isArray(cleanup), 'cleanup.policy is not a list');
  return {
    segmentBytes: num(config, 'segment.bytes'),
    segmentMs: num(config, 'segment.ms'),
    segmentJitterMs: num(config, 'segment.jitter.ms'),
    segmentIndexBytes: num(config, 'segment.index.bytes'),
    indexIntervalBytes: num(config, 'index.interval.bytes'),
    retentionMs: num(config, 'retention.ms'),
    retentionBytes: num(config, 'retention.bytes'),
    flushMessages: num(config, 'flush.messages'),
    flushMs: num(config, 'flush.ms'),
    fileDeleteDelayMs: num(config, 'file.delete.delay.ms'),
    cleanupPolicy: [
      ...new Set((cleanup as readonly string[]).map((p) => p.toLowerCase())),
    ] as CleanupPolicy[],
    deleteRetentionMs: num(config, 'delete.retention.ms'),
    minCompactionLagMs: num(config, 'min.compaction.lag.ms'),
    maxCompactionLagMs: num(config, 'max.compaction.lag.ms'),
    minCleanableDirtyRatio: num(config, 'min.cleanable.dirty.ratio'),
    maxMessageBytes: num(config, 'max.message.bytes'),
    messageTimestampType: oneOfValues(config, 'message.timestamp.type', TIMESTAMP_TYPES),
    messageTimestampBeforeMaxMs: timestampBound(config, 'message.timestamp.before.max.ms'),
    messageTimestampAfterMaxMs: timestampBound(config, 'message.timestamp.after.max.ms'),
    messageDownconversionEnable: bool(config, 'message.downconversion.enable'),
    compressionType: oneOfValues(config, 'compression.type', COMPRESSION_TYPES),
    compressionGzipLevel: num(config, 'compression.gzip.level'),
    compressionLz4Level: num(config, 'compression.lz4.level'),
    compressionZstdLevel: num(config, 'compression.zstd.level'),
    minInsyncReplicas: num(config, 'min.insync.replicas'),
    uncleanLeaderElectionEnable: bool(config, 'unclean.leader.election.enable'),
    preallocate: bool(config, 'preallocate'),
    encryptionEnable: bool(config, 'brook.encryption.enable'),
  };
}

/** A topic's settings straight from its overrides and the broker's layers. */
export function resolveTopicLogSettings(
  overrides: ReadonlyMap<string, string>,
  layers: BrokerConfigLayers,
): TopicLogSettings {
  return toTopicLogSettings(resolveTopicConfig(overrides, layers));
}
