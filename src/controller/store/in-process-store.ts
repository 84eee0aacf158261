// The in-process coordination store: ZooKeeper's semantics for a single Brook node, in memory, persisted in
// its data directory (see metadata-files.ts), with time taken from an injected Clock so that a seeded
// simulation can drive it.
//
// Owns: the data tree, the sessions (id, timeout, state, listeners), the watches and the files. A write is
// applied to the tree synchronously inside the call (nothing interleaves with it) and its log line written;
// its answer and the watch events it fires come once the line is on disk (a group commit: concurrent writes
// share one fdatasync, run off the event loop). Events are delivered on the microtask queue, so no listener
// ever runs in the middle of a transaction. Reads answer from the tree at once.
//
// Sessions: a session is connected from openSession() until close() or expiry. There is no network between a
// broker and this store, so nothing disconnects a session by itself; a test or the simulation injects faults
// with disconnectSession() (operations then fail with CONNECTIONLOSS), reconnectSession(), and expireSession().
// A disconnected session expires once its timeout has passed on the clock, noticed at the next tick() or
// operation. Session ids count up from 1, printed as ZooKeeper prints them (16 hex digits), and continue
// across restarts.
//
// Lifecycle: InProcessStore.open() recovers the files, deletes the ephemeral nodes that the previous run left
// (their sessions died with it), writes a fresh snapshot, and is ready. close() ends every session and closes
// the files. If writing or flushing the log fails, the store stops serving (every later call throws): memory
// is ahead of the disk, and only a restart from the files can tell what is durable.

import { assert } from '../../common/assert.js';
import { type Clock, systemClock } from '../../common/clock.js';
import { DataTree, type Transaction, type TreeChange } from './data-tree.js';
import { MetadataFiles } from './metadata-files.js';
import { isValidPath } from './paths.js';
import {
  type ChildrenWithStat,
  type CoordinationStore,
  type CreateMode,
  failure,
  type MultiResult,
  type NodeData,
  type Op,
  type SessionEvent,
  type SessionId,
  type SessionListener,
  type Stat,
  type StoreResult,
  success,
  type Watcher,
} from './store.js';
import { WatchRegistry } from './watch-registry.js';

export interface InProcessStoreOptions {
  /** Directory of the files; null keeps everything in memory (tests, the simulation). */
  readonly dataDir: string | null;
  readonly clock?: Clock;
  /** fsync each transaction before answering (default true): an acknowledged change survives a power cut. */
  readonly fsync?: boolean;
  /** Once the log passes this size a snapshot replaces it (default 16 MiB). */
  readonly snapshotAfterLogBytes?: number;
}

export interface SessionOptions {
  /** Default 18000, Kafka's zookeeper.session.timeout.ms. */
  readonly sessionTimeoutMs?: number;
}

type SessionState = 'connected' | 'disconnected' | 'expired' | 'closed';

interface SessionEntry {
  readonly id: SessionId;
  readonly timeoutMs: number;
  state: SessionState;
  disconnectedAtMs: number;
  readonly listeners: Set<SessionListener>;
}

const DEFAULT_SESSION_TIMEOUT_MS = 18_000;
const DEFAULT_SNAPSHOT_AFTER_LOG_BYTES = 16 * 1024 * 1024;
/** Owner used for transactions the store itself runs (deleting a dead session's ephemerals). */
const SYSTEM_SESSION: SessionId = '0000000000000000';

export class InProcessStore {
  private readonly sessions = new Map<SessionId, SessionEntry>();
  private readonly watches = new WatchRegistry();
  private failed: Error | null = null;
  private loggedTransactions = 0;
  private closed = false;

  private constructor(
    private readonly tree: DataTree,
    private nextSessionNumber: number,
    private readonly files: MetadataFiles | null,
    private readonly clock: Clock,
    private readonly snapshotAfterLogBytes: number,
  ) {}

  /**
   * Opens (or, with a null dataDir, creates in memory) a store. Throws MetadataLockedError when another live
   * process has the directory, MetadataCorruptError when its snapshot is not one this code wrote.
   */
  static open(options: InProcessStoreOptions): InProcessStore {
    const clock = options.clock ?? systemClock;
    const snapshotAfterLogBytes = options.snapshotAfterLogBytes ?? DEFAULT_SNAPSHOT_AFTER_LOG_BYTES;
    if (options.dataDir === null) {
      return new InProcessStore(new DataTree(), 1, null, clock, snapshotAfterLogBytes);
    }
    const { files, recovered } = MetadataFiles.open(options.dataDir, options.fsync ?? true);
    const snap = recovered.snapshot;
    const tree = snap === null ? new DataTree() : DataTree.fromRecords(snap.zxid, snap.root, snap.nodes);
    let nextSessionNumber = snap?.nextSessionNumber ?? 1;
    for (const txn of recovered.transactions) {
      tree.replay(txn);
      for (const op of txn.ops) {
        if (op.op === 'create' && op.owner !== null) {
          nextSessionNumber = Math.max(nextSessionNumber, Number.parseInt(op.owner, 16) + 1);
        }
      }
    }
    const store = new InProcessStore(tree, nextSessionNumber, files, clock, snapshotAfterLogBytes);
    store.dropLeftoverEphemerals();
    store.snapshot();
    return store;
  }

  openSession(options: SessionOptions = {}): CoordinationStore {
    this.assertUsable();
    const timeoutMs = options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
    assert(Number.isInteger(timeoutMs) && timeoutMs > 0, `bad session timeout ${timeoutMs}`);
    const id = this.nextSessionNumber.toString(16).padStart(16, '0');
    this.nextSessionNumber += 1;
    const entry: SessionEntry = {
      id,
      timeoutMs,
      state: 'connected',
      disconnectedAtMs: 0,
      listeners: new Set(),
    };
    this.sessions.set(id, entry);
    return new InProcessSession(this, entry);
  }

  /** Transactions logged and disk flushes made since open, for metrics: flushes < transactions under load. */
  durabilityStats(): { transactions: number; flushes: number } {
    return { transactions: this.loggedTransactions, flushes: this.files?.flushCount ?? 0 };
  }

  /** Ids of the sessions that are alive (connected or disconnected), sorted. */
  liveSessionIds(): SessionId[] {
    return [...this.sessions.values()]
      .filter((s) => s.state === 'connected' || s.state === 'disconnected')
      .map((s) => s.id)
      .sort();
  }

  /** Fault injection: the session loses its link; it expires unless reconnected within its timeout. */
  disconnectSession(id: SessionId): void {
    const entry = this.sessions.get(id);
    if (entry === undefined || entry.state !== 'connected') return;
    entry.state = 'disconnected';
    entry.disconnectedAtMs = this.clock.monotonicMs();
    emit(entry, 'disconnected');
  }

  /** Fault injection: the link is back; a session whose timeout already passed expires instead. */
  reconnectSession(id: SessionId): void {
    this.tick();
    const entry = this.sessions.get(id);
    if (entry === undefined || entry.state !== 'disconnected') return;
    entry.state = 'connected';
    emit(entry, 'reconnected');
  }

  /** Fault injection: the store ends the session now, as ZooKeeper does when it stops hearing from it. */
  expireSession(id: SessionId): void {
    const entry = this.sessions.get(id);
    if (entry === undefined || entry.state === 'expired' || entry.state === 'closed') return;
    this.endSession(entry, 'expired');
  }

  /** Expires disconnected sessions whose timeout has passed on the clock. */
  tick(): void {
    if (this.closed || this.failed !== null) return;
    const nowMs = this.clock.monotonicMs();
    for (const entry of [...this.sessions.values()]) {
      if (entry.state === 'disconnected' && nowMs - entry.disconnectedAtMs >= entry.timeoutMs) {
        this.endSession(entry, 'expired');
      }
    }
  }

  /** Ends every session (their ephemerals go) and closes the files. Idempotent. */
  close(): void {
    if (this.closed) return;
    if (this.failed === null) {
      for (const entry of [...this.sessions.values()]) {
        if (entry.state === 'connected' || entry.state === 'disconnected') this.endSession(entry, 'closed');
      }
    }
    this.closed = true;
    this.files?.close();
  }

  // The operations below are called by InProcessSession with its own entry.

  /**
   * Applies a transaction now (the tree changes without waiting) and settles once it is durable. The watches
   * it fires are taken now, so a read made after this change does not hear of it, and delivered once it is
   * durable, as is the caller's answer: nothing acts on a change that a crash could still undo.
   */
  async commit(entry: SessionEntry, ops: readonly Op[]): Promise<MultiResult> {
    const denied = this.deny(entry);
    if (denied !== null) return { ...denied, failedOpIndex: 0 };
    if (ops.length === 0) return success([]) as MultiResult;
    const outcome = this.tree.apply(ops, entry.id, this.clock.nowMs());
    if (!outcome.ok) return outcome;
    await this.persistAndNotify(outcome.transaction, outcome.changes);
    return success(outcome.results) as MultiResult;
  }

  read(entry: SessionEntry, path: string, watcher?: Watcher): StoreResult<NodeData> {
    const denied = this.deny(entry);
    if (denied !== null) return denied;
    const node = this.tree.get(path);
    if (node === null) return failure(isValidPath(path) ? 'NONODE' : 'BADARGUMENTS', path);
    if (watcher !== undefined) this.watches.addDataWatch(path, entry.id, watcher);
    return success({ data: Uint8Array.from(node.data), stat: node.stat });
  }

  exists(entry: SessionEntry, path: string, watcher?: Watcher): StoreResult<Stat | null> {
    const denied = this.deny(entry);
    if (denied !== null) return denied;
    if (!isValidPath(path)) return failure('BADARGUMENTS', path);
    // A watch on a missing node is how an owner learns of its creation (Kafka's controller election).
    if (watcher !== undefined) this.watches.addDataWatch(path, entry.id, watcher);
    return success(this.tree.stat(path));
  }

  children(entry: SessionEntry, path: string, watcher?: Watcher): StoreResult<string[]> {
    const denied = this.deny(entry);
    if (denied !== null) return denied;
    const names = this.tree.children(path);
    if (names === null) return failure(isValidPath(path) ? 'NONODE' : 'BADARGUMENTS', path);
    if (watcher !== undefined) this.watches.addChildWatch(path, entry.id, watcher);
    return success(names);
  }

  childrenWithStat(entry: SessionEntry, path: string, watcher?: Watcher): StoreResult<ChildrenWithStat> {
    const names = this.children(entry, path, watcher);
    if (!names.ok) return names;
    // Same turn of the event loop as the names: nothing commits in between.
    const stat = this.tree.stat(path);
    assert(stat !== null, 'a node with children read has a stat');
    return success({ names: names.value, stat });
  }

  async closeSession(entry: SessionEntry): Promise<void> {
    if (entry.state === 'expired' || entry.state === 'closed') return;
    this.assertUsable();
    await this.endSession(entry, 'closed');
  }

  private deny(entry: SessionEntry): { ok: false; code: 'SESSIONEXPIRED' | 'CONNECTIONLOSS' } | null {
    // A session the store already ended answers like ZooKeeper, even once the store itself is closed.
    if (entry.state === 'expired' || entry.state === 'closed') return { ok: false, code: 'SESSIONEXPIRED' };
    this.assertUsable();
    this.tick();
    // tick() may have just expired it.
    const state = entry.state as SessionState;
    if (state === 'expired' || state === 'closed') return { ok: false, code: 'SESSIONEXPIRED' };
    if (entry.state === 'disconnected') return { ok: false, code: 'CONNECTIONLOSS' };
    return null;
  }

  /** Ends a session at once; the promise settles when the deletion of its ephemerals is durable. */
  private endSession(entry: SessionEntry, how: 'expired' | 'closed'): Promise<void> {
    const ephemerals = this.tree.ephemeralsOf(entry.id);
    entry.state = how;
    this.sessions.delete(entry.id);
    // An expired session hears nothing more. A closing one is, in ZooKeeper, still told of the deletion of its
    // own ephemerals (the server fires those watches before it drops the connection), so its watches go after.
    if (how === 'expired') this.watches.dropSession(entry.id);
    emit(entry, how);
    let done = Promise.resolve();
    if (ephemerals.length > 0) {
      const ops: Op[] = ephemerals.map((path) => ({ op: 'delete', path, version: -1 }));
      const outcome = this.tree.apply(ops, SYSTEM_SESSION, this.clock.nowMs());
      assert(outcome.ok, `deleting the ephemerals of session ${entry.id} failed`);
      // This takes the watches the deletion fires at once, before the line below drops the rest.
      done = this.persistAndNotify(outcome.transaction, outcome.changes);
      // Expiry and tick() do not wait; a flush failure is recorded by persistAndNotify and stops the store.
      done.catch(() => {});
    }
    if (how === 'closed') this.watches.dropSession(entry.id);
    return done;
  }

  private dropLeftoverEphemerals(): void {
    const ops: Op[] = this.tree
      .records()
      .filter((r) => r.ephemeralOwner !== null)
      .map((r) => ({ op: 'delete', path: r.path, version: -1 }));
    if (ops.length === 0) return;
    const outcome = this.tree.apply(ops, SYSTEM_SESSION, this.clock.nowMs());
    assert(outcome.ok, 'deleting ephemerals left by the previous run failed');
  }

  /** Logs a committed transaction, takes the watches it fires, and delivers them once it is durable. */
  private async persistAndNotify(txn: Transaction, changes: readonly TreeChange[]): Promise<void> {
    const deliveries = this.watches.trigger(changes);
    if (this.files !== null) {
      try {
        this.files.append(txn);
        this.loggedTransactions += 1;
        if (this.files.logSizeBytes >= this.snapshotAfterLogBytes) this.snapshot();
        await this.files.durable();
      } catch (e) {
        this.failed = e as Error;
        throw e;
      }
    }
    for (const delivery of deliveries) queueMicrotask(() => delivery.watcher(delivery.event));
  }

  private snapshot(): void {
    if (this.files === null) return;
    this.files.writeSnapshot({
      zxid: this.tree.zxid,
      nextSessionNumber: this.nextSessionNumber,
      root: this.tree.rootCounters(),
      nodes: this.tree.records(),
    });
  }

  private assertUsable(): void {
    if (this.failed !== null) throw new Error(`in-process store failed: ${this.failed.message}`);
    assert(!this.closed, 'in-process store is closed');
  }
}

function emit(entry: SessionEntry, event: SessionEvent): void {
  for (const listener of [...entry.listeners]) queueMicrotask(() => listener(event));
}

/** One session of the in-process store, the object owners hold. */
class InProcessSession implements CoordinationStore {
  constructor(
    private readonly store: InProcessStore,
    private readonly entry: SessionEntry,
  ) {}

  get sessionId(): SessionId {
    return this.entry.id;
  }

  get sessionTimeoutMs(): number {
    return this.entry.timeoutMs;
  }

  async create(
    path: string,
    data: Uint8Array,
    mode: CreateMode = 'persistent',
  ): Promise<StoreResult<string>> {
    const outcome = await this.store.commit(this.entry, [{ op: 'create', path, data, mode }]);
    if (!outcome.ok) return failure(outcome.code, outcome.path);
    const [result] = outcome.value;
    assert(result !== undefined && result.op === 'create');
    return success(result.path);
  }

  async get(path: string, watcher?: Watcher): Promise<StoreResult<NodeData>> {
    return this.store.read(this.entry, path, watcher);
  }

  async set(path: string, data: Uint8Array, expectedVersion: number): Promise<StoreResult<Stat>> {
    const outcome = await this.store.commit(this.entry, [
      { op: 'set', path, data, version: expectedVersion },
    ]);
    if (!outcome.ok) return failure(outcome.code, outcome.path);
    const [result] = outcome.value;
    assert(result !== undefined && result.op === 'set');
    return success(result.stat);
  }

  async delete(path: string, expectedVersion: number): Promise<StoreResult<void>> {
    const outcome = await this.store.commit(this.entry, [{ op: 'delete', path, version: expectedVersion }]);
    return outcome.ok ? success(undefined) : failure(outcome.code, outcome.path);
  }

  async exists(path: string, watcher?: Watcher): Promise<StoreResult<Stat | null>> {
    return this.store.exists(this.entry, path, watcher);
  }

  async children(path: string, watcher?: Watcher): Promise<StoreResult<string[]>> {
    return this.store.children(this.entry, path, watcher);
  }

  async childrenWithStat(path: string, watcher?: Watcher): Promise<StoreResult<ChildrenWithStat>> {
    return this.store.childrenWithStat(this.entry, path, watcher);
  }

  async multi(ops: readonly Op[]): Promise<MultiResult> {
    return this.store.commit(this.entry, ops);
  }

  onSessionEvent(listener: SessionListener): () => void {
    this.entry.listeners.add(listener);
    return () => this.entry.listeners.delete(listener);
  }

  async close(): Promise<void> {
    await this.store.closeSession(this.entry);
  }
}
