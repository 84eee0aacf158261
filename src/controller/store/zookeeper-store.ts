// The coordination store over a real ZooKeeper ensemble, through node-zookeeper-client (pure JavaScript, with
// multi; see README.md for why this client).
//
// Owns: one client connection and so one ZooKeeper session. connectZooKeeper() waits for the session to be
// established; from then on the client reconnects by itself after a connection loss (the session and its
// ephemerals survive if it is back within the session timeout). Session events map as follows:
// the client's DISCONNECTED gives `disconnected`, a later SYNC_CONNECTED gives `reconnected`, EXPIRED gives
// `expired`, after which every call answers SESSIONEXPIRED and the owner connects again with a new session.
// Operations sent while disconnected wait in the client's queue until it reconnects; those in flight when the
// link drops answer CONNECTIONLOSS (ZooKeeper's rule: their effect is unknown, read back to find out).
//
// Watches are ZooKeeper's own one-shot watches. A session that expires never fires the watches it had.

import type { Socket } from 'node:net';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import * as zk from 'node-zookeeper-client';
import { assert } from '../../common/assert.js';
import { isValidPath } from './paths.js';
import {
  type ChildrenWithStat,
  type CoordinationStore,
  type CreateMode,
  failure,
  type MultiResult,
  NODE_DATA_BYTES_MAX,
  type NodeData,
  type Op,
  type OpResult,
  type SessionEvent,
  type SessionId,
  type SessionListener,
  type Stat,
  type StoreErrorCode,
  type StoreFailure,
  type StoreResult,
  success,
  type WatchEventType,
  type Watcher,
} from './store.js';
import { kafkaNodeAcls, type ZooKeeperAcl } from './zookeeper-acls.js';
import { useSasl, type ZooKeeperSaslExchange } from './zookeeper-sasl.js';
import { useTlsSockets } from './zookeeper-tls-socket.js';

export interface ZooKeeperStoreOptions {
  /** Kafka's zookeeper.connect: "host:port[,host:port...][/chroot]". */
  readonly connect: string;
  /** Asked of the server, which clamps it to its [minSessionTimeout, maxSessionTimeout]. Default 18000. */
  readonly sessionTimeoutMs?: number;
  /** How long to wait for the first session (Kafka's zookeeper.connection.timeout.ms). Default: the session timeout. */
  readonly connectionTimeoutMs?: number;
  /** Pause between rounds of connection attempts over the ensemble. Default 200. */
  readonly reconnectDelayMs?: number;
  /**
   * How long one request may wait for its reply before it answers CONNECTIONLOSS. While no server is reachable
   * the client holds requests until it reconnects, which may be never; an owner must be able to give up and
   * decide. As with any CONNECTIONLOSS the outcome is unknown: the client may still send the request after it
   * reconnects (the Java client does the same), which is why writes that matter are conditional.
   * Default: twice the session timeout.
   */
  readonly requestTimeoutMs?: number;
  /**
   * Reach the servers over TLS (ZooKeeper's secureClientPort) with these options; unset: plain TCP. Built from
   * Kafka's zookeeper.ssl.* keys by src/security/zookeeper-tls.ts.
   */
  readonly tls?: TlsConnectionOptions | null;
  /**
   * Authenticate each connection with SASL (ZooKeeper's DIGEST-MD5 for a JAAS `Client` section): a new exchange
   * per connection. Unset: no SASL.
   */
  readonly sasl?: (() => ZooKeeperSaslExchange) | null;
  /**
   * Kafka's zookeeper.set.acl: nodes are created with Kafka's secure ACLs (all permissions to the authenticated
   * identity, read to everyone except on sensitive paths; zookeeper-acls.ts) instead of open to everyone. The
   * session must be authenticated (SASL or a TLS client certificate), or ZooKeeper refuses creations with
   * INVALIDACL. Default false.
   */
  readonly secureAcls?: boolean;
  /**
   * Hears each TLS socket error (a refused certificate, an untrusted server) and SASL failure, which would
   * otherwise be silent.
   */
  readonly onConnectionError?: (error: Error) => void;
}

const DEFAULT_SESSION_TIMEOUT_MS = 18_000;
const DEFAULT_RECONNECT_DELAY_MS = 200;
/** How long close() waits for the server to confirm before dropping the socket anyway. */
const CLOSE_WAIT_MS = 2_000;

/** Opens a session; CONNECTIONLOSS when no server answered within the connection timeout. */
export async function connectZooKeeper(
  options: ZooKeeperStoreOptions,
): Promise<StoreResult<CoordinationStore>> {
  const sessionTimeoutMs = options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
  const client = zk.createClient(options.connect, {
    sessionTimeout: sessionTimeoutMs,
    spinDelay: options.reconnectDelayMs ?? DEFAULT_RECONNECT_DELAY_MS,
    retries: 0,
  });
  guardReplies(client, options.onConnectionError);
  if (options.tls) useTlsSockets(client, options.tls, options.onConnectionError);
  if (options.sasl) useSasl(client, options.sasl, options.onConnectionError);
  const connected = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), options.connectionTimeoutMs ?? sessionTimeoutMs);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve(true);
    });
    // A refused SASL exchange: the client does not try again, so neither does waiting (the reason went to
    // onConnectionError).
    client.once('authenticationFailed', () => {
      clearTimeout(timer);
      resolve(false);
    });
    client.connect();
  });
  if (!connected) {
    client.close();
    return failure('CONNECTIONLOSS');
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? 2 * sessionTimeoutMs;
  return success(new ZooKeeperSession(client, requestTimeoutMs, options.secureAcls ?? false));
}

class ZooKeeperSession implements CoordinationStore {
  readonly sessionId: SessionId;
  readonly sessionTimeoutMs: number;
  private readonly listeners = new Set<SessionListener>();
  private state: 'connected' | 'disconnected' | 'expired' | 'closed' = 'connected';

  constructor(
    private readonly client: zk.Client,
    private readonly requestTimeoutMs: number,
    private readonly secureAcls: boolean,
  ) {
    this.sessionId = client.getSessionId().toString('hex');
    this.sessionTimeoutMs = client.getSessionTimeout();
    client.on('state', (s: zk.State) => this.onState(s));
    this.silence = new SilenceWatchdog(client);
  }

  private readonly silence: SilenceWatchdog;

  async create(
    path: string,
    data: Uint8Array,
    mode: CreateMode = 'persistent',
  ): Promise<StoreResult<string>> {
    const refused = this.refuse(path, data);
    if (refused !== null) return refused;
    return this.request(path, (resolve) => {
      this.client.create(path, toBuffer(data), this.aclsFor(path), createModes[mode], (error, created) => {
        resolve(error ? fromError(error, path) : success(created));
      });
    });
  }

  async get(path: string, watcher?: Watcher): Promise<StoreResult<NodeData>> {
    const refused = this.refuse(path);
    if (refused !== null) return refused;
    return this.request(path, (resolve) => {
      const done = (error: Error | zk.Exception | null, data: Buffer | null, stat: zk.Stat) => {
        resolve(error ? fromError(error, path) : success({ data: fromBuffer(data), stat: toStat(stat) }));
      };
      if (watcher === undefined) this.client.getData(path, done);
      else this.client.getData(path, adapt(watcher), done);
    });
  }

  async set(path: string, data: Uint8Array, expectedVersion: number): Promise<StoreResult<Stat>> {
    const refused = this.refuse(path, data);
    if (refused !== null) return refused;
    return this.request(path, (resolve) => {
      this.client.setData(path, toBuffer(data), expectedVersion, (error, stat) => {
        resolve(error ? fromError(error, path) : success(toStat(stat)));
      });
    });
  }

  async delete(path: string, expectedVersion: number): Promise<StoreResult<void>> {
    const refused = this.refuse(path);
    if (refused !== null) return refused;
    return this.request(path, (resolve) => {
      this.client.remove(path, expectedVersion, (error) => {
        resolve(error ? fromError(error, path) : success(undefined));
      });
    });
  }

  async exists(path: string, watcher?: Watcher): Promise<StoreResult<Stat | null>> {
    const refused = this.refuse(path);
    if (refused !== null) return refused;
    return this.request(path, (resolve) => {
      const done = (error: Error | zk.Exception | null, stat: zk.Stat | null) => {
        resolve(error ? fromError(error, path) : success(stat ? toStat(stat) : null));
      };
      if (watcher === undefined) this.client.exists(path, done);
      else this.client.exists(path, adapt(watcher), done);
    });
  }

  async children(path: string, watcher?: Watcher): Promise<StoreResult<string[]>> {
    const refused = this.refuse(path);
    if (refused !== null) return refused;
    return this.request(path, (resolve) => {
      const done = (error: Error | zk.Exception | null, names: string[]) => {
        resolve(error ? fromError(error, path) : success([...names].sort()));
      };
      if (watcher === undefined) this.client.getChildren(path, done);
      else this.client.getChildren(path, adapt(watcher), done);
    });
  }

  async childrenWithStat(path: string, watcher?: Watcher): Promise<StoreResult<ChildrenWithStat>> {
    const refused = this.refuse(path);
    if (refused !== null) return refused;
    return this.request(path, (resolve) => {
      // The client always sends getChildren2, whose answer carries the parent's stat with the names.
      const done = (error: Error | zk.Exception | null, names: string[], stat: zk.Stat) => {
        resolve(error ? fromError(error, path) : success({ names: [...names].sort(), stat: toStat(stat) }));
      };
      if (watcher === undefined) this.client.getChildren(path, done);
      else this.client.getChildren(path, adapt(watcher), done);
    });
  }

  async multi(ops: readonly Op[]): Promise<MultiResult> {
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const refused = this.refuse(op.path, op.op === 'create' || op.op === 'set' ? op.data : undefined);
      if (refused !== null) return { ...refused, failedOpIndex: i };
    }
    if (ops.length === 0) return success([]) as MultiResult;
    const txn = this.client.transaction();
    const queued = (txn as unknown as { ops?: Array<{ version?: number }> }).ops;
    assert(Array.isArray(queued), 'node-zookeeper-client no longer keeps transaction ops where expected');
    for (const op of ops) {
      if (op.op === 'check') txn.check(op.path, op.version);
      else if (op.op === 'create')
        txn.create(op.path, toBuffer(op.data), this.aclsFor(op.path), createModes[op.mode]);
      else if (op.op === 'set') txn.setData(op.path, toBuffer(op.data), op.version);
      else txn.remove(op.path, op.version);
      // The client turns an expected version of 0 into -1 (`version || -1`, its issue #67), which would make
      // the controller's fencing check on a fresh /controller_epoch match anything. Put the real one back.
      if (op.op !== 'create') queued[queued.length - 1]!.version = op.version;
    }
    const lost: MultiResult = { ...failure('CONNECTIONLOSS'), failedOpIndex: 0 };
    return this.send<MultiResult>(lost, (resolve) => {
      txn.commit((error, results: MultiResponse[] | undefined) => resolve(multiOutcome(ops, error, results)));
    });
  }

  /** The ACL list of a node (ZooKeeper's getACL); NOAUTH when the session may neither read nor administer it. */
  async getAcl(path: string): Promise<StoreResult<ZooKeeperAcl[]>> {
    const refused = this.refuse(path);
    if (refused !== null) return refused;
    return this.request(path, (resolve) => {
      this.client.getACL(path, (error, acls) => {
        if (error) return resolve(fromError(error, path));
        // The library's ACL keeps its bits in `permission`; its type declarations call the field `perms`.
        const perms = (acl: zk.ACL) => (acl as unknown as { permission: number }).permission;
        resolve(success(acls.map((a) => ({ perms: perms(a), scheme: a.id.scheme, id: a.id.id }))));
      });
    });
  }

  private aclsFor(path: string): zk.ACL[] {
    return kafkaNodeAcls(this.secureAcls, path).map((a) => new zk.ACL(a.perms, new zk.Id(a.scheme, a.id)));
  }

  onSessionEvent(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasExpired = this.state === 'expired';
    this.state = 'closed';
    this.silence.stop();
    if (!wasExpired) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, CLOSE_WAIT_MS);
        this.client.once('disconnected', () => {
          clearTimeout(timer);
          resolve();
        });
        this.client.close();
      });
    } else {
      this.client.close();
    }
    this.emit('closed');
  }

  private request<T>(
    path: string,
    start: (resolve: (result: StoreResult<T>) => void) => void,
  ): Promise<StoreResult<T>> {
    return this.send<StoreResult<T>>(failure('CONNECTIONLOSS', path), start);
  }

  /** Starts one request; answers `lost` if its reply does not come within the request timeout. */
  private send<R>(lost: R, start: (resolve: (result: R) => void) => void): Promise<R> {
    return new Promise((resolve) => {
      let settled = false;
      const timer = setTimeout(() => finish(lost), this.requestTimeoutMs);
      const finish = (result: R) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      start(finish);
    });
  }

  /** Refuses locally what the client library would throw on, and calls on a dead session. */
  private refuse(path: string, data?: Uint8Array): StoreFailure | null {
    if (this.state === 'closed' || this.state === 'expired') return failure('SESSIONEXPIRED', path);
    if (!isValidPath(path)) return failure('BADARGUMENTS', path);
    if (data !== undefined && data.length > NODE_DATA_BYTES_MAX) return failure('BADARGUMENTS', path);
    return null;
  }

  private onState(s: zk.State): void {
    if (this.state === 'closed' || this.state === 'expired') return;
    if (s === zk.State.DISCONNECTED && this.state === 'connected') {
      this.state = 'disconnected';
      this.emit('disconnected');
    } else if (s === zk.State.SYNC_CONNECTED && this.state === 'disconnected') {
      this.state = 'connected';
      this.emit('reconnected');
    } else if (s === zk.State.EXPIRED) {
      this.state = 'expired';
      this.silence.stop();
      this.client.close();
      this.emit('expired');
    }
  }

  private emit(event: SessionEvent): void {
    // On the microtask queue, as the in-process store does: a listener never runs inside the client's own
    // event dispatch, so whatever it calls on the client starts from a consistent state.
    for (const listener of [...this.listeners]) queueMicrotask(() => listener(event));
  }
}

/**
 * node-zookeeper-client throws from its socket's data handler at an error code it does not know (ZooKeeper 3.6+
 * answers -124, SESSIONCLOSEDREQUIRESASLAUTH, to every request of a client that has not authenticated when the
 * server enforces SASL), which would end the process. Such a throw drops the connection instead, reported as a
 * connection error; the request it was about times out as CONNECTIONLOSS (requestTimeoutMs).
 */
function guardReplies(client: zk.Client, onError: (error: Error) => void = () => {}): void {
  const manager = (client as unknown as { connectionManager?: ReplyHandlerView }).connectionManager;
  assert(
    manager !== undefined && typeof manager.onSocketData === 'function',
    'node-zookeeper-client no longer has the reply handler guarded here',
  );
  const onSocketData = manager.onSocketData.bind(manager);
  manager.onSocketData = (data: Buffer) => {
    try {
      onSocketData(data);
    } catch (err) {
      onError(new Error(`ZooKeeper reply not understood (${(err as Error).message}); reconnecting`));
      manager.socket?.destroy();
    }
  };
}

interface ReplyHandlerView {
  readonly socket?: Socket;
  onSocketData(data: Buffer): void;
}

/** What SilenceWatchdog reads of node-zookeeper-client's ConnectionManager (not public API; 1.1.3). */
interface ConnectionManagerView {
  readonly state: number;
  readonly socket?: Socket;
  /** The negotiated session timeout once connected. */
  readonly sessionTimeout: number;
  /** How long one server may take to answer a connection attempt. */
  readonly connectTimeout: number;
}

/** The ConnectionManager's CONNECTING and CONNECTED states. */
const CM_CONNECTING = 1;
const CM_CONNECTED = 2;

/**
 * The read timeout node-zookeeper-client lacks. It pings only when the socket is idle and waits for a reply
 * forever, so a connection whose server vanished without the close reaching us (ZooKeeper killed while the
 * network dropped its packets, a half-open TCP connection) stays "connected" for good: no `disconnected`, no
 * reconnection, so never an `expired` either, and every request times out (chaos finding F2). ZooKeeper's Java
 * client gives a connection 2/3 of the session timeout to say anything (a ping reply, at least, since it pings
 * after 1/3 of silence) and otherwise drops it and tries again; this does the same by destroying the socket,
 * after which the library's own close handling reports the disconnection and reconnects with the session's id
 * and password, and the server answers either the same session or its expiry. A connection that is open but
 * has not answered the connect request yet gets the library's connect timeout.
 */
class SilenceWatchdog {
  private watched: Socket | undefined;
  private lastHeardMs = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(client: zk.Client) {
    const manager = (client as unknown as { connectionManager?: ConnectionManagerView }).connectionManager;
    assert(
      manager !== undefined && typeof manager.state === 'number',
      'node-zookeeper-client no longer keeps its connection manager where expected',
    );
    const checkEveryMs = Math.max(50, Math.floor(manager.sessionTimeout / 12));
    this.timer = setInterval(() => this.check(manager), checkEveryMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private check(manager: ConnectionManagerView): void {
    const socket = manager.socket;
    if (socket === undefined) return;
    if (socket !== this.watched) {
      this.watched = socket;
      this.lastHeardMs = Date.now();
      const heard = () => {
        if (this.watched === socket) this.lastHeardMs = Date.now();
      };
      socket.on('connect', heard);
      socket.on('data', heard);
    }
    if (socket.connecting || socket.destroyed) return;
    let limitMs: number;
    if (manager.state === CM_CONNECTED) limitMs = Math.floor((manager.sessionTimeout * 2) / 3);
    else if (manager.state === CM_CONNECTING) limitMs = manager.connectTimeout;
    else return;
    if (Date.now() - this.lastHeardMs > limitMs) socket.destroy();
  }
}

/** One entry of the client's multi response: `err` is set on every entry of a failed transaction. */
interface MultiResponse {
  readonly type: number;
  readonly err?: number;
  readonly path?: string;
  readonly stat?: zk.Stat;
}

const createModes: Record<CreateMode, number> = {
  persistent: zk.CreateMode.PERSISTENT,
  ephemeral: zk.CreateMode.EPHEMERAL,
  persistent_sequential: zk.CreateMode.PERSISTENT_SEQUENTIAL,
  ephemeral_sequential: zk.CreateMode.EPHEMERAL_SEQUENTIAL,
};

const errorNames = new Map<number, StoreErrorCode>([
  [zk.Exception.NO_NODE, 'NONODE'],
  [zk.Exception.NODE_EXISTS, 'NODEEXISTS'],
  [zk.Exception.BAD_VERSION, 'BADVERSION'],
  [zk.Exception.NOT_EMPTY, 'NOTEMPTY'],
  [zk.Exception.NO_CHILDREN_FOR_EPHEMERALS, 'NOCHILDRENFOREPHEMERALS'],
  [zk.Exception.BAD_ARGUMENTS, 'BADARGUMENTS'],
  [zk.Exception.SESSION_EXPIRED, 'SESSIONEXPIRED'],
  [zk.Exception.CONNECTION_LOSS, 'CONNECTIONLOSS'],
  // Possible only with secure ACLs: another identity's node, or creating one without being authenticated.
  [zk.Exception.NO_AUTH, 'NOAUTH'],
  [zk.Exception.INVALID_ACL, 'INVALIDACL'],
  // A timed-out request is, for its caller, a lost connection: the outcome is unknown.
  [zk.Exception.OPERATION_TIMEOUT, 'CONNECTIONLOSS'],
]);

/** ZooKeeper's code for the entries after the failing one in a failed multi. */
const RUNTIME_INCONSISTENCY = zk.Exception.RUNTIME_INCONSISTENCY;
const OP_ERROR = -1;

function errorCode(error: Error | zk.Exception): StoreErrorCode {
  const code = (error as { code?: unknown }).code;
  const name = typeof code === 'number' ? errorNames.get(code) : undefined;
  // Anything else (MARSHALLINGERROR, ...) is not an outcome Brook's callers can act on.
  if (name === undefined) throw new Error(`unexpected ZooKeeper error: ${String(error)}`);
  return name;
}

function fromError(error: Error | zk.Exception, path: string): StoreFailure {
  return failure(errorCode(error), path);
}

function multiOutcome(
  ops: readonly Op[],
  error: Error | zk.Exception | null,
  results: MultiResponse[] | undefined,
): MultiResult {
  if (error) {
    const index = results?.findIndex(
      (r) => r.type === OP_ERROR && r.err !== 0 && r.err !== RUNTIME_INCONSISTENCY,
    );
    const failedOpIndex = index === undefined || index < 0 ? 0 : index;
    return { ...failure(errorCode(error), ops[failedOpIndex]?.path), failedOpIndex };
  }
  const out = ops.map((op, i) => opResult(op, results?.[i]));
  return success(out) as MultiResult;
}

function opResult(op: Op, response: MultiResponse | undefined): OpResult {
  if (op.op === 'create') return { op: 'create', path: response?.path ?? op.path };
  if (op.op === 'set') return { op: 'set', stat: toStat(response!.stat!) };
  return { op: op.op };
}

const eventTypes = new Map<number, WatchEventType>([
  [zk.Event.NODE_CREATED, 'created'],
  [zk.Event.NODE_DELETED, 'deleted'],
  [zk.Event.NODE_DATA_CHANGED, 'dataChanged'],
  [zk.Event.NODE_CHILDREN_CHANGED, 'childrenChanged'],
]);

/**
 * The client's callback for a watcher. The same watcher always maps to the same callback, so that the client,
 * which ignores a callback already registered on a path, fires a watcher registered twice only once.
 */
const adapted = new WeakMap<Watcher, (event: zk.Event) => void>();

function adapt(watcher: Watcher): (event: zk.Event) => void {
  let callback = adapted.get(watcher);
  if (callback === undefined) {
    callback = (event) => {
      const type = eventTypes.get(event.getType());
      if (type !== undefined) watcher({ type, path: event.getPath() });
    };
    adapted.set(watcher, callback);
  }
  return callback;
}

function toBuffer(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

function fromBuffer(data: Buffer | null): Uint8Array {
  return data === null ? new Uint8Array(0) : new Uint8Array(data);
}

function long(bytes: Buffer): number {
  const value = bytes.readBigInt64BE(0);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`ZooKeeper value ${value} is beyond a safe integer`);
  return n;
}

function toStat(stat: zk.Stat): Stat {
  const owner = stat.ephemeralOwner;
  return {
    czxid: long(stat.czxid),
    mzxid: long(stat.mzxid),
    pzxid: long(stat.pzxid),
    ctimeMs: long(stat.ctime),
    mtimeMs: long(stat.mtime),
    version: stat.version,
    cversion: stat.cversion,
    ephemeralOwner: owner.every((b) => b === 0) ? null : owner.toString('hex'),
    dataLength: stat.dataLength,
    numChildren: stat.numChildren,
  };
}

/** The ACL list of a node of a ZooKeeper store (not of the in-process store, which has no ACLs). */
export function readZooKeeperAcl(
  store: CoordinationStore,
  path: string,
): Promise<StoreResult<ZooKeeperAcl[]>> {
  assert(store instanceof ZooKeeperSession, 'ACLs exist only in a ZooKeeper store');
  return store.getAcl(path);
}
