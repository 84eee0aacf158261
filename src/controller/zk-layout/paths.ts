// Kafka's znode paths, so that an operator who knows a Kafka cluster in ZooKeeper finds the same tree under
// Brook. Names passed in (topics, config entities) must already be valid: a '/' in one would address another
// node, so it is an assertion, not a value, and the request handlers validate names before they get here.

import { assert } from '../../common/assert.js';
import type { BrokerId, PartitionId } from '../../common/ids.js';

/** Kafka's legal topic characters; '.' and '..' alone are refused as well. */
const SAFE_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

/** Any single znode name; config entities (sanitized user principals, client ids) are wider than topics. */
function segment(name: string, what: string): string {
  assert(
    name.length > 0 && !name.includes('/') && name !== '.' && name !== '..',
    `${what} ${JSON.stringify(name)} cannot be a znode name`,
  );
  return name;
}

function safe(name: string, what: string): string {
  assert(
    SAFE_NAME.test(name) && name !== '.' && name !== '..',
    `${what} ${JSON.stringify(name)} cannot be a znode name`,
  );
  return name;
}

/** The broker config entity for cluster-wide defaults, as Kafka names it. */
export const DEFAULT_BROKER_ENTITY = '<default>';

export const CLUSTER_ID_PATH = '/cluster/id';
export const CONTROLLER_PATH = '/controller';
export const CONTROLLER_EPOCH_PATH = '/controller_epoch';
export const BROKERS_PATH = '/brokers';
export const BROKER_IDS_PATH = '/brokers/ids';
export const TOPICS_PATH = '/brokers/topics';
/** A persistent node whose data version Kafka uses to generate broker ids (reserved.broker.max.id + version). */
export const BROKER_SEQUENCE_ID_PATH = '/brokers/seqid';
export const CONFIG_PATH = '/config';
export const CONFIG_CHANGES_PATH = '/config/changes';
/** Sequential children are created with this prefix; ZooKeeper appends ten digits. */
export const CONFIG_CHANGE_PREFIX = 'config_change_';
export const ADMIN_PATH = '/admin';
export const DELETE_TOPICS_PATH = '/admin/delete_topics';
export const REASSIGN_PARTITIONS_PATH = '/admin/reassign_partitions';
export const PREFERRED_REPLICA_ELECTION_PATH = '/admin/preferred_replica_election';
export const ISR_CHANGE_NOTIFICATION_PATH = '/isr_change_notification';
export const ISR_CHANGE_PREFIX = 'isr_change_';
export const LOG_DIR_EVENT_NOTIFICATION_PATH = '/log_dir_event_notification';
export const LOG_DIR_EVENT_PREFIX = 'log_dir_event_';
export const PRODUCER_ID_BLOCK_PATH = '/latest_producer_id_block';
/** Kafka's old consumers wrote here; it is still among the paths a Kafka broker creates at startup. */
export const CONSUMERS_PATH = '/consumers';

/** Entity types under /config, as Kafka names them. */
export type ConfigEntityType = 'topics' | 'clients' | 'users' | 'brokers' | 'ips';
export const CONFIG_ENTITY_TYPES: readonly ConfigEntityType[] = [
  'topics',
  'clients',
  'users',
  'brokers',
  'ips',
];

/** The persistent paths a Kafka broker makes sure exist when it starts (its ZkData.PersistentZkPaths). */
export const PERSISTENT_PATHS: readonly string[] = [
  CONSUMERS_PATH,
  BROKER_IDS_PATH,
  TOPICS_PATH,
  CONFIG_CHANGES_PATH,
  DELETE_TOPICS_PATH,
  BROKER_SEQUENCE_ID_PATH,
  ISR_CHANGE_NOTIFICATION_PATH,
  PRODUCER_ID_BLOCK_PATH,
  LOG_DIR_EVENT_NOTIFICATION_PATH,
  ...CONFIG_ENTITY_TYPES.map((t) => `${CONFIG_PATH}/${t}`),
];

export function brokerPath(id: BrokerId): string {
  assert(id >= 0, `broker id ${id} cannot be registered`);
  return `${BROKER_IDS_PATH}/${id}`;
}

export function topicPath(topic: string): string {
  return `${TOPICS_PATH}/${safe(topic, 'topic')}`;
}

export function topicPartitionsPath(topic: string): string {
  return `${topicPath(topic)}/partitions`;
}

export function partitionPath(topic: string, partition: PartitionId): string {
  return `${topicPartitionsPath(topic)}/${partition}`;
}

export function partitionStatePath(topic: string, partition: PartitionId): string {
  return `${partitionPath(topic, partition)}/state`;
}

export function configEntityPath(type: ConfigEntityType, name: string): string {
  return `${CONFIG_PATH}/${type}/${segment(name, `${type} entity`)}`;
}

export function topicConfigPath(topic: string): string {
  return configEntityPath('topics', topic);
}

export function brokerConfigPath(broker: BrokerId | typeof DEFAULT_BROKER_ENTITY): string {
  return configEntityPath('brokers', String(broker));
}

export function deleteTopicPath(topic: string): string {
  return `${DELETE_TOPICS_PATH}/${safe(topic, 'topic')}`;
}

/** The path to pass to a sequential create of a config change notification. */
export function configChangeCreatePath(): string {
  return `${CONFIG_CHANGES_PATH}/${CONFIG_CHANGE_PREFIX}`;
}

export function isrChangeCreatePath(): string {
  return `${ISR_CHANGE_NOTIFICATION_PATH}/${ISR_CHANGE_PREFIX}`;
}

export function logDirEventCreatePath(): string {
  return `${LOG_DIR_EVENT_NOTIFICATION_PATH}/${LOG_DIR_EVENT_PREFIX}`;
}

/** The sequence number of a notification child name ("config_change_0000000042" gives 42), or null. */
export function sequenceNumberOf(childName: string, prefix: string): number | null {
  if (!childName.startsWith(prefix)) return null;
  const digits = childName.slice(prefix.length);
  return /^\d{10}$/.test(digits) ? Number(digits) : null;
}
