// The coordination store interface: what the controller and the brokers need from ZooKeeper, and no more.
//
// One CoordinationStore object is one session. Its ephemeral nodes live as long as the session; when the
// session expires the object is dead for good (every call answers SESSIONEXPIRED) and its owner opens a new
// one and registers again, exactly as a Kafka broker does with its ZooKeeper client.
//
// Semantics follow ZooKeeper's, so that the in-process store and the ZooKeeper store are interchangeable:
// - Versions: every node has a data version that starts at 0 and grows by one on each set. `set`, `delete` and
//   the `check` of `multi` take an expected version; ANY_VERSION (-1) matches whatever is there.
// - Sequential nodes get ZooKeeper's suffix: how many children the parent has ever had created (deletes do not
//   count), ten digits, zero padded.
// - Watches are one-shot, as in ZooKeeper (and as Kafka's controller expects): a watch set by a read fires at
//   most once, after the change is applied, and the owner reads again (setting a new watch) to keep watching.
//   Watches are lost when the session expires; the session-expired event tells the owner to re-register.
// - Operating errors are values (StoreFailure with ZooKeeper's error names), never exceptions. Exceptions mean a
//   bug or an I/O failure of the in-process store's data directory.

/** A session id, as ZooKeeper prints it: 16 lowercase hex digits. */
export type SessionId = string;

/** ZooKeeper's error names for the failures an owner is expected to handle. */
export type StoreErrorCode =
  | 'NONODE'
  | 'NODEEXISTS'
  | 'BADVERSION'
  | 'NOTEMPTY'
  | 'NOCHILDRENFOREPHEMERALS'
  | 'BADARGUMENTS'
  | 'SESSIONEXPIRED'
  | 'CONNECTIONLOSS'
  /** ZooKeeper only, with secure ACLs (zookeeper.set.acl): the session's identity lacks the permission. */
  | 'NOAUTH'
  /** ZooKeeper only: a creation with an ACL the server refuses (the creator ACL on an unauthenticated session). */
  | 'INVALIDACL';

/** Matches any version in set, delete and check. */
export const ANY_VERSION = -1;

/**
 * Largest node data either store accepts. ZooKeeper's jute.maxbuffer is 1 MiB for a whole packet, and it drops
 * the connection on a larger one; both stores refuse bigger data up front with BADARGUMENTS instead.
 */
export const NODE_DATA_BYTES_MAX = 1024 * 1024 - 16 * 1024;

export type CreateMode = 'persistent' | 'ephemeral' | 'persistent_sequential' | 'ephemeral_sequential';

export function isEphemeralMode(mode: CreateMode): boolean {
  return mode === 'ephemeral' || mode === 'ephemeral_sequential';
}

export function isSequentialMode(mode: CreateMode): boolean {
  return mode === 'persistent_sequential' || mode === 'ephemeral_sequential';
}

/** A node's metadata, ZooKeeper's Stat with zxids as numbers (safe integers) and times in milliseconds. */
export interface Stat {
  /** Transaction id that created the node; Kafka uses the czxid of /brokers/ids/<id> as the broker epoch. */
  readonly czxid: number;
  /** Transaction id of the last data change. */
  readonly mzxid: number;
  /** Transaction id of the last change to the children. */
  readonly pzxid: number;
  readonly ctimeMs: number;
  readonly mtimeMs: number;
  /** Data version: 0 at creation, +1 for each set. */
  readonly version: number;
  /** Child version: +1 for each child created or deleted. */
  readonly cversion: number;
  /** The owning session of an ephemeral node, null for a persistent one. */
  readonly ephemeralOwner: SessionId | null;
  readonly dataLength: number;
  readonly numChildren: number;
}

/** A node's child names, sorted, and its stat, read together. */
export interface ChildrenWithStat {
  readonly names: string[];
  readonly stat: Stat;
}

export interface StoreFailure {
  readonly ok: false;
  readonly code: StoreErrorCode;
  /** The path the failure is about, when there is one. */
  readonly path?: string;
}

export type StoreResult<T> = { readonly ok: true; readonly value: T } | StoreFailure;

export function success<T>(value: T): StoreResult<T> {
  return { ok: true, value };
}

export function failure(code: StoreErrorCode, path?: string): StoreFailure {
  return path === undefined ? { ok: false, code } : { ok: false, code, path };
}

export type WatchEventType = 'created' | 'deleted' | 'dataChanged' | 'childrenChanged';

export interface WatchEvent {
  readonly type: WatchEventType;
  readonly path: string;
}

/** A one-shot watch: called at most once, after the change it reports has been applied. */
export type Watcher = (event: WatchEvent) => void;

/**
 * Session life: `disconnected` when the link to the store is lost (operations may fail with CONNECTIONLOSS, and
 * their effect is then unknown); `reconnected` when it is back within the session timeout (ephemerals and
 * watches intact); `expired` when the store has ended the session (ephemerals deleted, watches gone, the
 * object is dead); `closed` after the owner's own close().
 */
export type SessionEvent = 'disconnected' | 'reconnected' | 'expired' | 'closed';

export type SessionListener = (event: SessionEvent) => void;

export type Op =
  | { readonly op: 'check'; readonly path: string; readonly version: number }
  | { readonly op: 'create'; readonly path: string; readonly data: Uint8Array; readonly mode: CreateMode }
  | { readonly op: 'set'; readonly path: string; readonly data: Uint8Array; readonly version: number }
  | { readonly op: 'delete'; readonly path: string; readonly version: number };

export type OpResult =
  | { readonly op: 'check' }
  | { readonly op: 'create'; readonly path: string }
  | { readonly op: 'set'; readonly stat: Stat }
  | { readonly op: 'delete' };

/** A failed multi names the first operation that failed; nothing of the transaction was applied. */
export interface MultiFailure extends StoreFailure {
  readonly failedOpIndex: number;
}

export type MultiResult = { readonly ok: true; readonly value: OpResult[] } | MultiFailure;

export interface NodeData {
  readonly data: Uint8Array;
  readonly stat: Stat;
}

export interface CoordinationStore {
  /** This session's id; ephemeral nodes it creates carry it as their ephemeralOwner. */
  readonly sessionId: SessionId;
  /** The timeout the store granted (ZooKeeper may clamp the one asked for). */
  readonly sessionTimeoutMs: number;

  /** Creates a node; answers its actual path (with the sequence suffix for sequential modes). */
  create(path: string, data: Uint8Array, mode?: CreateMode): Promise<StoreResult<string>>;
  /** Reads a node's data and stat; the watcher fires on dataChanged or deleted. */
  get(path: string, watcher?: Watcher): Promise<StoreResult<NodeData>>;
  /** Writes data if the node's version equals expectedVersion (or it is ANY_VERSION); answers the new stat. */
  set(path: string, data: Uint8Array, expectedVersion: number): Promise<StoreResult<Stat>>;
  /** Deletes a childless node if its version equals expectedVersion (or it is ANY_VERSION). */
  delete(path: string, expectedVersion: number): Promise<StoreResult<void>>;
  /** The node's stat, or null when there is none; the watcher fires on created, dataChanged or deleted. */
  exists(path: string, watcher?: Watcher): Promise<StoreResult<Stat | null>>;
  /** Child names, sorted; the watcher fires on childrenChanged or deleted. */
  children(path: string, watcher?: Watcher): Promise<StoreResult<string[]>>;
  /**
   * children() with the parent's stat from the same read (ZooKeeper's getChildren2): the names and the child
   * version describe one moment.
   */
  childrenWithStat(path: string, watcher?: Watcher): Promise<StoreResult<ChildrenWithStat>>;
  /** Applies all operations atomically, or none of them. */
  multi(ops: readonly Op[]): Promise<MultiResult>;

  /** Subscribes to session events; returns the function that unsubscribes. */
  onSessionEvent(listener: SessionListener): () => void;
  /** Ends the session: its ephemeral nodes are deleted. Idempotent. */
  close(): Promise<void>;
}
