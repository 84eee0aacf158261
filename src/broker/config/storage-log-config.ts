// The bridge from this module's resolved settings to the storage engine's own config types
// (src/storage/log-config.ts): a topic's TopicLogSettings becomes a LogConfig, and the broker's config becomes
// the LogManagerConfig. Field by field, so a field added on either side shows up here as a type error.

import type { LogCleanerConfig } from '../../storage/cleaner/log-cleaner.js';
import type { LogConfig, LogManagerConfig } from '../../storage/log-config.js';
import { type BrokerConfig, resolveBrokerConfig } from './broker-config.js';
import type { TopicLogSettings } from './topic-log-settings.js';

/**
 * An empty cleanup.policy (allowed by Kafka 3.x) means neither deleting nor compacting. The storage engine has
 * no such policy, so it is expressed as delete with no time or size bound, which keeps everything.
 */
function cleanup(
  settings: TopicLogSettings,
): Pick<LogConfig, 'cleanupPolicy' | 'retentionMs' | 'retentionBytes'> {
  const compact = settings.cleanupPolicy.includes('compact');
  const del = settings.cleanupPolicy.includes('delete');
  if (!compact && !del) return { cleanupPolicy: 'delete', retentionMs: -1, retentionBytes: -1 };
  return {
    cleanupPolicy: compact && del ? 'compact,delete' : compact ? 'compact' : 'delete',
    retentionMs: settings.retentionMs,
    retentionBytes: settings.retentionBytes,
  };
}

/** The broker's group commit keys (cluster-wide dynamic; no topic-level keys). */
export interface GroupCommitSettings {
  /** brook.log.flush.group.commit.enable */
  readonly enable: boolean;
  /** brook.log.flush.group.commit.max.delay.ms */
  readonly maxDelayMs: number;
}

export const GROUP_COMMIT_OFF: GroupCommitSettings = Object.freeze({ enable: false, maxDelayMs: 0 });

/**
 * The group commit keys in the merged broker config (static file, --override and dynamic layers), read for each
 * log's config so that a dynamic change reaches every log when the broker layers are reloaded. Only these two
 * keys are parsed (this runs for every hosted partition on a reload); their values were validated when set.
 */
export function groupCommitOf(merged: ReadonlyMap<string, string>): GroupCommitSettings {
  const enable = merged.get('brook.log.flush.group.commit.enable')?.trim().toLowerCase() === 'true';
  const delay = Number(merged.get('brook.log.flush.group.commit.max.delay.ms') ?? 0);
  return { enable, maxDelayMs: Number.isInteger(delay) && delay > 0 ? delay : 0 };
}

/**
 * ackAfterFsync and its max delay come from the broker's group commit keys; they have no topic-level keys.
 * `encryptionAvailable` is whether the broker has a key store: without one no segment can be encrypted, and the
 * broker refused to start if brook.encryption.enable asked for it broker-wide.
 */
export function toStorageLogConfig(
  settings: TopicLogSettings,
  groupCommit: GroupCommitSettings,
  encryptionAvailable = false,
): LogConfig {
  return {
    segmentBytes: settings.segmentBytes,
    segmentMs: settings.segmentMs,
    segmentJitterMs: settings.segmentJitterMs,
    segmentIndexBytes: settings.segmentIndexBytes,
    indexIntervalBytes: settings.indexIntervalBytes,
    flushMessages: settings.flushMessages,
    flushMs: settings.flushMs,
    fileDeleteDelayMs: settings.fileDeleteDelayMs,
    messageTimestampType: settings.messageTimestampType,
    maxMessageBytes: settings.maxMessageBytes,
    preallocate: settings.preallocate,
    deleteRetentionMs: settings.deleteRetentionMs,
    minCleanableDirtyRatio: settings.minCleanableDirtyRatio,
    minCompactionLagMs: settings.minCompactionLagMs,
    maxCompactionLagMs: settings.maxCompactionLagMs,
    ackAfterFsync: groupCommit.enable,
    groupCommitMaxDelayMs: groupCommit.maxDelayMs,
    encrypt: settings.encryptionEnable && encryptionAvailable,
    ...cleanup(settings),
  };
}

export function toLogManagerConfig(config: BrokerConfig): LogManagerConfig {
  return {
    retentionCheckIntervalMs: config.logRetentionCheckIntervalMs,
    flushSchedulerIntervalMs: config.values.long('log.flush.scheduler.interval.ms'),
    flushOffsetCheckpointIntervalMs: config.logFlushOffsetCheckpointIntervalMs,
    flushStartOffsetCheckpointIntervalMs: config.logFlushStartOffsetCheckpointIntervalMs,
    highWatermarkCheckpointIntervalMs: config.replicaHighWatermarkCheckpointIntervalMs,
    producerIdExpirationMs: config.producerIdExpirationMs,
    producerIdExpirationCheckIntervalMs: config.producerIdExpirationCheckIntervalMs,
    cleanerEnable: config.logCleanerEnable,
    cleanerThreads: config.logCleanerThreads,
    cleanerDedupeBufferBytes: config.logCleanerDedupeBufferSize,
    cleanerIoBufferBytes: config.values.int('log.cleaner.io.buffer.size'),
    cleanerIoBufferLoadFactor: config.values.double('log.cleaner.io.buffer.load.factor'),
    cleanerBackoffMs: config.logCleanerBackoffMs,
    tailCacheBytes: config.values.long('brook.log.tail.cache.bytes'),
    appendInlineEnable: config.values.boolean('brook.log.append.inline.enable'),
    readInlineMaxBytes: config.values.int('brook.log.read.inline.max.bytes'),
    cleanerIoMaxBytesPerSecond: config.values.double('log.cleaner.io.max.bytes.per.second'),
  };
}

/** The cleaner's settings in the merged broker config (static file, --override and dynamic layers). */
export function cleanerConfigOf(merged: ReadonlyMap<string, string>): LogCleanerConfig {
  const m = toLogManagerConfig(resolveBrokerConfig(merged));
  return {
    cleanerEnable: m.cleanerEnable,
    cleanerThreads: m.cleanerThreads,
    cleanerDedupeBufferBytes: m.cleanerDedupeBufferBytes,
    cleanerIoBufferBytes: m.cleanerIoBufferBytes,
    cleanerIoBufferLoadFactor: m.cleanerIoBufferLoadFactor,
    cleanerBackoffMs: m.cleanerBackoffMs,
    cleanerIoMaxBytesPerSecond: m.cleanerIoMaxBytesPerSecond,
  };
}
