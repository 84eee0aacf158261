// The coordination store as the broker's start reads it (the cluster id, the overrides of the topics with logs on
// disk, the dynamic broker configs) and makes the persistent paths: a request that answers CONNECTIONLOSS or SESSIONEXPIRED is sent again until
// it gets an answer, so a ZooKeeper outage during the start delays the start instead of failing it. Kafka does the
// same: every KafkaZkClient read goes through retryRequestsUntilConnected, which waits without a bound
// (ZooKeeperClient.waitUntilConnected) for the connection to come back; only the first connection is bounded, by
// zookeeper.connection.timeout.ms. A session that expired meanwhile is renewed by RenewableSession, and the read
// is sent on the new one. A stop during the start ends the wait, with the last answer.
//
// Persistent creates (Kafka's persistent paths, the cluster id) are sent again too, as Kafka's createRecursive and
// makeSurePersistentPathExists go through retryRequestsUntilConnected: one whose first try did land answers
// NODEEXISTS, which every caller takes as the node being there (ensurePath; the cluster id's create reads the id
// back). Other writes keep answering CONNECTIONLOSS, whose effect is unknown and which their callers read back: a
// sequential create sent again would make a second node, an ephemeral one belongs to register()'s own retries.

import type { Logger } from '../common/logger.js';
import type {
  ChildrenWithStat,
  CoordinationStore,
  CreateMode,
  MultiResult,
  NodeData,
  Op,
  SessionId,
  SessionListener,
  Stat,
  StoreResult,
  Watcher,
} from '../controller/store/store.js';

/** The pause between two attempts of a read; each attempt itself waits for its answer up to the request timeout. */
const READ_RETRY_MS = 500;

export class StartReads implements CoordinationStore {
  /** Whether the current outage was logged: one line when it starts, one when it ends. */
  private waiting = false;

  constructor(
    private readonly store: CoordinationStore,
    /** True once the broker is stopping: the wait ends. */
    private readonly stopping: () => boolean,
    private readonly logger: Logger,
  ) {}

  get sessionId(): SessionId {
    return this.store.sessionId;
  }

  get sessionTimeoutMs(): number {
    return this.store.sessionTimeoutMs;
  }

  get(path: string, watcher?: Watcher): Promise<StoreResult<NodeData>> {
    return this.untilAnswered(path, () => this.store.get(path, watcher));
  }

  exists(path: string, watcher?: Watcher): Promise<StoreResult<Stat | null>> {
    return this.untilAnswered(path, () => this.store.exists(path, watcher));
  }

  children(path: string, watcher?: Watcher): Promise<StoreResult<string[]>> {
    return this.untilAnswered(path, () => this.store.children(path, watcher));
  }

  childrenWithStat(path: string, watcher?: Watcher): Promise<StoreResult<ChildrenWithStat>> {
    return this.untilAnswered(path, () => this.store.childrenWithStat(path, watcher));
  }

  create(path: string, data: Uint8Array, mode?: CreateMode): Promise<StoreResult<string>> {
    if (mode !== undefined && mode !== 'persistent') return this.store.create(path, data, mode);
    return this.untilAnswered(path, () => this.store.create(path, data, mode));
  }

  set(path: string, data: Uint8Array, expectedVersion: number): Promise<StoreResult<Stat>> {
    return this.store.set(path, data, expectedVersion);
  }

  delete(path: string, expectedVersion: number): Promise<StoreResult<void>> {
    return this.store.delete(path, expectedVersion);
  }

  multi(ops: readonly Op[]): Promise<MultiResult> {
    return this.store.multi(ops);
  }

  onSessionEvent(listener: SessionListener): () => void {
    return this.store.onSessionEvent(listener);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private async untilAnswered<T>(path: string, read: () => Promise<StoreResult<T>>): Promise<StoreResult<T>> {
    for (;;) {
      const result = await read();
      const lost = !result.ok && (result.code === 'CONNECTIONLOSS' || result.code === 'SESSIONEXPIRED');
      if (!lost || this.stopping()) {
        if (this.waiting && !lost) this.logger.info('ZooKeeper answers again: the start goes on');
        if (!lost) this.waiting = false;
        return result;
      }
      if (!this.waiting) {
        this.waiting = true;
        this.logger.warn(`${path} at start failed (${result.code}): waiting for ZooKeeper`);
      }
      await new Promise((r) => setTimeout(r, READ_RETRY_MS));
    }
  }
}
