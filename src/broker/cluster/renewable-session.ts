// A coordination store session that outlives ZooKeeper session expiry, as a Kafka broker does: when the session
// expires (a long pause, a network partition), a new one is opened, and the owner re-registers the broker and
// restarts what depends on ephemeral nodes and watches (the controller, config watches). Everything that holds
// the store holds this object, so nobody keeps a dead session.
//
// Calls made between expiry and renewal go to the expired session and fail with SESSIONEXPIRED, which their
// callers already handle as an operating error.

import type { Logger } from '../../common/logger.js';
import type {
  ChildrenWithStat,
  CoordinationStore,
  CreateMode,
  MultiResult,
  NodeData,
  Op,
  SessionListener,
  Stat,
  StoreResult,
  Watcher,
} from '../../controller/store/store.js';

const RENEW_BACKOFF_MS = 1_000;

export class RenewableSession implements CoordinationStore {
  private current: CoordinationStore;
  private readonly listeners = new Set<SessionListener>();
  private unsubscribeCurrent: () => void = () => {};
  private closed = false;

  constructor(
    first: CoordinationStore,
    private readonly open: () => Promise<CoordinationStore>,
    private readonly onRenewed: () => Promise<void>,
    private readonly logger: Logger,
  ) {
    this.current = first;
    this.follow(first);
  }

  get sessionId(): string {
    return this.current.sessionId;
  }

  get sessionTimeoutMs(): number {
    return this.current.sessionTimeoutMs;
  }

  create(path: string, data: Uint8Array, mode?: CreateMode): Promise<StoreResult<string>> {
    return this.current.create(path, data, mode);
  }

  get(path: string, watcher?: Watcher): Promise<StoreResult<NodeData>> {
    return this.current.get(path, watcher);
  }

  set(path: string, data: Uint8Array, expectedVersion: number): Promise<StoreResult<Stat>> {
    return this.current.set(path, data, expectedVersion);
  }

  delete(path: string, expectedVersion: number): Promise<StoreResult<void>> {
    return this.current.delete(path, expectedVersion);
  }

  exists(path: string, watcher?: Watcher): Promise<StoreResult<Stat | null>> {
    return this.current.exists(path, watcher);
  }

  children(path: string, watcher?: Watcher): Promise<StoreResult<string[]>> {
    return this.current.children(path, watcher);
  }
  childrenWithStat(path: string, watcher?: Watcher): Promise<StoreResult<ChildrenWithStat>> {
    return this.current.childrenWithStat(path, watcher);
  }

  multi(ops: readonly Op[]): Promise<MultiResult> {
    return this.current.multi(ops);
  }

  onSessionEvent(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): Promise<void> {
    this.closed = true;
    this.unsubscribeCurrent();
    return this.current.close();
  }

  private follow(session: CoordinationStore): void {
    this.unsubscribeCurrent = session.onSessionEvent((event) => {
      for (const listener of [...this.listeners]) listener(event);
      if (event === 'expired' && !this.closed) {
        this.renew().catch((err: unknown) => this.logger.error(`session renewal failed: ${String(err)}`));
      }
    });
  }

  private async renew(): Promise<void> {
    this.logger.warn(`coordination store session ${this.current.sessionId} expired: opening a new one`);
    this.unsubscribeCurrent();
    while (!this.closed) {
      try {
        const next = await this.open();
        if (this.closed) {
          await next.close();
          return;
        }
        this.current = next;
        this.follow(next);
        this.logger.info(`new coordination store session ${next.sessionId}`);
        try {
          await this.onRenewed();
          return;
        } catch (err) {
          // Re-registration failed (a CONNECTIONLOSS, say). Close the session before opening another: left
          // open, its half-made registration would make every later session's answer NODEEXISTS, owned by
          // a session nobody uses.
          this.logger.warn(`after a new session: ${err instanceof Error ? err.message : String(err)}`);
          this.unsubscribeCurrent();
          await next.close();
        }
      } catch (err) {
        this.logger.warn(`opening a new session failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      await new Promise((r) => setTimeout(r, RENEW_BACKOFF_MS));
    }
  }
}
