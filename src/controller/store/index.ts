// The coordination store's public surface: the interface, both implementations, the service that picks one,
// and the local ZooKeeper runner. Internals (data tree, watch registry, files) stay unexported.
export * from './coordination-service.js';
export { InProcessStore, type InProcessStoreOptions, type SessionOptions } from './in-process-store.js';
export {
  type LocalZooKeeper,
  type LocalZooKeeperOptions,
  startLocalZooKeeper,
  stopLocalZooKeeper,
} from './local-zookeeper.js';
export { METADATA_DIR_NAME, MetadataCorruptError, MetadataLockedError } from './metadata-files.js';
export * from './store.js';
export {
  isSensitivePath,
  kafkaNodeAcls,
  OPEN_ACL,
  ZOOKEEPER_PERMS,
  type ZooKeeperAcl,
} from './zookeeper-acls.js';
export {
  connectZooKeeper,
  readZooKeeperAcl,
  type ZooKeeperStoreOptions,
} from './zookeeper-store.js';
