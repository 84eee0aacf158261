// The chroot of zookeeper.connect ("host:port[,...]/a/b"), made at the broker's start before it connects under it,
// as Kafka's broker does (KafkaZkClient.apply with createChrootIfNecessary: a client at the ensemble's root asks
// pathExists, then makeSurePersistentPathExists).
//
// Owns: one session at the ensemble's root, opened for this and closed before answering. Only the first connection
// is bounded (zookeeper.connection.timeout.ms, as Kafka's); after it, each request goes through StartReads, which
// sends it again after a CONNECTIONLOSS until ZooKeeper answers, and a session that expires meanwhile is renewed by
// RenewableSession: Kafka's createRecursive goes through retryRequestUntilConnected, which waits for the
// connection without a bound, and its ZooKeeperClient reopens an expired session by itself. A stop during the wait
// ends it with the last answer.

import type { Logger } from '../common/logger.js';
import { isValidPath, parentOf } from '../controller/store/paths.js';
import { type CoordinationStore, failure, type StoreResult, success } from '../controller/store/store.js';
import { connectZooKeeper, type ZooKeeperStoreOptions } from '../controller/store/zookeeper-store.js';
import { RenewableSession } from './cluster/renewable-session.js';
import { StartReads } from './start-reads.js';

/**
 * Creates the chroot of `options.connect` and its parents when missing. Without a chroot there is nothing to do.
 * Answers the path that could not be made (BADARGUMENTS for a chroot that is no valid path, CONNECTIONLOSS when the
 * first connection failed or the broker stopped while waiting).
 */
export async function ensureZooKeeperChroot(
  options: ZooKeeperStoreOptions,
  stopping: () => boolean,
  logger: Logger,
): Promise<StoreResult<void>> {
  const slash = options.connect.indexOf('/');
  if (slash < 0) return success(undefined);
  const chroot = options.connect.slice(slash);
  if (chroot === '/') return success(undefined);
  if (!isValidPath(chroot)) return failure('BADARGUMENTS', chroot);
  const atRoot = { ...options, connect: options.connect.slice(0, slash) };
  const opened = await connectZooKeeper(atRoot);
  if (!opened.ok) return opened;
  const open = async (): Promise<CoordinationStore> => {
    const next = await connectZooKeeper(atRoot);
    if (!next.ok) throw new Error(`cannot connect to ZooKeeper at ${atRoot.connect}: ${next.code}`);
    return next.value;
  };
  const session = new RenewableSession(opened.value, open, async () => {}, logger);
  try {
    const store = new StartReads(session, stopping, logger);
    const found = await store.exists(chroot);
    if (!found.ok) return failure(found.code, chroot);
    if (found.value !== null) return success(undefined);
    return await createWithParents(store, chroot);
  } finally {
    await session.close();
  }
}

/** Kafka's createRecursive: the path first, its parents only when ZooKeeper answers that one is missing. */
async function createWithParents(store: CoordinationStore, path: string): Promise<StoreResult<void>> {
  let created = await store.create(path, new Uint8Array(0));
  // The root always exists, so a NONODE names a parent below it.
  if (!created.ok && created.code === 'NONODE' && parentOf(path) !== '/') {
    const parent = await createWithParents(store, parentOf(path));
    if (!parent.ok) return parent;
    created = await store.create(path, new Uint8Array(0));
  }
  if (!created.ok && created.code !== 'NODEEXISTS') return failure(created.code, path);
  return success(undefined);
}
