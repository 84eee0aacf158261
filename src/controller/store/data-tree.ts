// The in-memory znode tree with ZooKeeper's rules, used by the in-process store.
//
// Owns: every node's data and stat, the children of each node, which session owns which ephemeral nodes, and
// the transaction counter (zxid). It knows nothing of sessions' liveness, watches or files: the in-process
// store decides who may write, and this tree only says what a transaction does.
//
// Every write is a transaction (a multi of one or more operations) that gets one zxid. A transaction applies
// its operations one by one, recording how to undo each; if one fails, the undo steps run in reverse and the
// tree is exactly as before. A transaction runs to completion synchronously: nothing can interleave.

import { assert } from '../../common/assert.js';
import { isValidPath, nameOf, parentOf, sequenceSuffix } from './paths.js';
import {
  ANY_VERSION,
  type CreateMode,
  isEphemeralMode,
  isSequentialMode,
  type MultiFailure,
  NODE_DATA_BYTES_MAX,
  type NodeData,
  type Op,
  type OpResult,
  type SessionId,
  type Stat,
  type StoreErrorCode,
} from './store.js';

interface ZNode {
  data: Uint8Array;
  /**
   * ZooKeeper's stored child version: the number of children ever created. Sequential names use it; the
   * cversion a Stat reports also counts deletes, and ZooKeeper derives it (see toStat).
   */
  czxid: number;
  mzxid: number;
  pzxid: number;
  ctimeMs: number;
  mtimeMs: number;
  version: number;
  cversion: number;
  ephemeralOwner: SessionId | null;
  children: Set<string>;
}

/** A change a committed transaction made, in order, for watches. */
export type TreeChange =
  | { readonly kind: 'created'; readonly path: string }
  | { readonly kind: 'deleted'; readonly path: string }
  | { readonly kind: 'dataChanged'; readonly path: string };

/** An operation as it was applied: what replaying it needs, with sequence numbers already resolved. */
export type AppliedOp =
  | {
      readonly op: 'create';
      readonly path: string;
      readonly data: Uint8Array;
      readonly owner: SessionId | null;
    }
  | { readonly op: 'set'; readonly path: string; readonly data: Uint8Array }
  | { readonly op: 'delete'; readonly path: string };

export interface Transaction {
  readonly zxid: number;
  readonly timeMs: number;
  readonly ops: readonly AppliedOp[];
}

export interface Committed {
  readonly ok: true;
  readonly results: OpResult[];
  readonly changes: TreeChange[];
  readonly transaction: Transaction;
}

/** A node as a snapshot holds it. */
export interface NodeRecord {
  readonly path: string;
  readonly data: Uint8Array;
  readonly czxid: number;
  readonly mzxid: number;
  readonly pzxid: number;
  readonly ctimeMs: number;
  readonly mtimeMs: number;
  readonly version: number;
  readonly cversion: number;
  readonly ephemeralOwner: SessionId | null;
}

type Step = { ok: true; result: OpResult } | { ok: false; code: StoreErrorCode };

const SYSTEM_PATHS: readonly string[] = ['/zookeeper', '/zookeeper/config', '/zookeeper/quota'];

export class DataTree {
  private readonly nodes = new Map<string, ZNode>();
  private readonly ephemeralsBySession = new Map<SessionId, Set<string>>();
  private lastZxid = 0;

  constructor() {
    this.nodes.set('/', emptyNode(0, 0, null));
    // ZooKeeper's own nodes, so that the root lists as on a real server. Nobody created them as children:
    // as in ZooKeeper, they do not count in their parent's stored child version, and snapshots leave them out.
    for (const path of SYSTEM_PATHS) {
      this.nodes.set(path, emptyNode(0, 0, null));
      this.nodes.get(parentOf(path))!.children.add(nameOf(path));
    }
  }

  get zxid(): number {
    return this.lastZxid;
  }

  stat(path: string): Stat | null {
    const node = this.nodes.get(path);
    return node === undefined ? null : toStat(node);
  }

  get(path: string): NodeData | null {
    const node = this.nodes.get(path);
    return node === undefined ? null : { data: node.data, stat: toStat(node) };
  }

  children(path: string): string[] | null {
    const node = this.nodes.get(path);
    return node === undefined ? null : [...node.children].sort();
  }

  ephemeralsOf(session: SessionId): string[] {
    return [...(this.ephemeralsBySession.get(session) ?? [])].sort();
  }

  /** Every node, parents before children, for a snapshot. */
  records(): NodeRecord[] {
    const paths = [...this.nodes.keys()].filter((p) => p !== '/' && !SYSTEM_PATHS.includes(p)).sort();
    return paths.map((path) => {
      const n = this.nodes.get(path)!;
      return {
        path,
        data: n.data,
        czxid: n.czxid,
        mzxid: n.mzxid,
        pzxid: n.pzxid,
        ctimeMs: n.ctimeMs,
        mtimeMs: n.mtimeMs,
        version: n.version,
        cversion: n.cversion,
        ephemeralOwner: n.ephemeralOwner,
      };
    });
  }

  /** Rebuilds the tree from a snapshot: records sorted parents first, and the root's own counters. */
  static fromRecords(
    zxid: number,
    root: { cversion: number; pzxid: number },
    records: NodeRecord[],
  ): DataTree {
    const tree = new DataTree();
    tree.lastZxid = zxid;
    const rootNode = tree.nodes.get('/')!;
    rootNode.cversion = root.cversion;
    rootNode.pzxid = root.pzxid;
    for (const r of records) {
      assert(isValidPath(r.path) && r.path !== '/', `snapshot has a bad path ${r.path}`);
      const parent = tree.nodes.get(parentOf(r.path));
      assert(parent !== undefined, `snapshot has ${r.path} before its parent`);
      const { path, ...fields } = r;
      tree.nodes.set(path, { ...fields, children: new Set() });
      parent.children.add(nameOf(path));
      if (r.ephemeralOwner !== null) tree.trackEphemeral(r.ephemeralOwner, path);
    }
    return tree;
  }

  rootCounters(): { cversion: number; pzxid: number } {
    const root = this.nodes.get('/')!;
    return { cversion: root.cversion, pzxid: root.pzxid };
  }

  /**
   * Runs ops as one transaction for `session` at `timeMs`. On success the tree has changed and the zxid moved
   * on by one; on failure nothing changed and the answer names the failing operation.
   */
  apply(ops: readonly Op[], session: SessionId, timeMs: number): Committed | MultiFailure {
    const zxid = this.lastZxid + 1;
    const undo: Array<() => void> = [];
    const results: OpResult[] = [];
    const changes: TreeChange[] = [];
    const applied: AppliedOp[] = [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const step = this.step(op, session, zxid, timeMs, undo, changes, applied);
      if (!step.ok) {
        for (let u = undo.length - 1; u >= 0; u--) undo[u]!();
        return { ok: false, code: step.code, path: op.path, failedOpIndex: i };
      }
      results.push(step.result);
    }
    this.lastZxid = zxid;
    return { ok: true, results, changes, transaction: { zxid, timeMs, ops: applied } };
  }

  /** Replays a transaction read back from the log; it succeeded once, so it must succeed again. */
  replay(txn: Transaction): TreeChange[] {
    assert(txn.zxid === this.lastZxid + 1, `log gap: expected zxid ${this.lastZxid + 1}, found ${txn.zxid}`);
    const undo: Array<() => void> = [];
    const changes: TreeChange[] = [];
    const applied: AppliedOp[] = [];
    for (const op of txn.ops) {
      const asOp: Op =
        op.op === 'create'
          ? {
              op: 'create',
              path: op.path,
              data: op.data,
              mode: op.owner === null ? 'persistent' : 'ephemeral',
            }
          : op.op === 'set'
            ? { op: 'set', path: op.path, data: op.data, version: ANY_VERSION }
            : { op: 'delete', path: op.path, version: ANY_VERSION };
      const owner = op.op === 'create' && op.owner !== null ? op.owner : '';
      const step = this.step(asOp, owner, txn.zxid, txn.timeMs, undo, changes, applied);
      assert(step.ok, `replay of zxid ${txn.zxid} failed on ${op.op} ${op.path}`);
    }
    this.lastZxid = txn.zxid;
    return changes;
  }

  private step(
    op: Op,
    session: SessionId,
    zxid: number,
    timeMs: number,
    undo: Array<() => void>,
    changes: TreeChange[],
    applied: AppliedOp[],
  ): Step {
    if (!isValidPath(op.path)) return { ok: false, code: 'BADARGUMENTS' };
    if ((op.op === 'create' || op.op === 'set') && op.data.length > NODE_DATA_BYTES_MAX) {
      return { ok: false, code: 'BADARGUMENTS' };
    }
    switch (op.op) {
      case 'check':
        return this.check(op.path, op.version);
      case 'create':
        return this.create(op.path, op.data, op.mode, session, zxid, timeMs, undo, changes, applied);
      case 'set':
        return this.set(op.path, op.data, op.version, zxid, timeMs, undo, changes, applied);
      case 'delete':
        return this.remove(op.path, op.version, zxid, undo, changes, applied);
    }
  }

  private check(path: string, version: number): Step {
    const node = this.nodes.get(path);
    if (node === undefined) return { ok: false, code: 'NONODE' };
    if (version !== ANY_VERSION && node.version !== version) return { ok: false, code: 'BADVERSION' };
    return { ok: true, result: { op: 'check' } };
  }

  private create(
    requested: string,
    data: Uint8Array,
    mode: CreateMode,
    session: SessionId,
    zxid: number,
    timeMs: number,
    undo: Array<() => void>,
    changes: TreeChange[],
    applied: AppliedOp[],
  ): Step {
    const parentPath = parentOf(requested);
    const parent = this.nodes.get(parentPath);
    if (parent === undefined) return { ok: false, code: 'NONODE' };
    if (parent.ephemeralOwner !== null) return { ok: false, code: 'NOCHILDRENFOREPHEMERALS' };
    const path = isSequentialMode(mode) ? requested + sequenceSuffix(parent.cversion) : requested;
    if (this.nodes.has(path)) return { ok: false, code: 'NODEEXISTS' };
    const owner = isEphemeralMode(mode) ? session : null;
    const node = emptyNode(zxid, timeMs, owner);
    node.data = Uint8Array.from(data);
    const before = { cversion: parent.cversion, pzxid: parent.pzxid };
    this.nodes.set(path, node);
    parent.children.add(nameOf(path));
    parent.cversion += 1;
    parent.pzxid = zxid;
    if (owner !== null) this.trackEphemeral(owner, path);
    undo.push(() => {
      this.nodes.delete(path);
      parent.children.delete(nameOf(path));
      parent.cversion = before.cversion;
      parent.pzxid = before.pzxid;
      if (owner !== null) this.untrackEphemeral(owner, path);
    });
    changes.push({ kind: 'created', path });
    applied.push({ op: 'create', path, data: node.data, owner });
    return { ok: true, result: { op: 'create', path } };
  }

  private set(
    path: string,
    data: Uint8Array,
    version: number,
    zxid: number,
    timeMs: number,
    undo: Array<() => void>,
    changes: TreeChange[],
    applied: AppliedOp[],
  ): Step {
    const node = this.nodes.get(path);
    if (node === undefined) return { ok: false, code: 'NONODE' };
    if (version !== ANY_VERSION && node.version !== version) return { ok: false, code: 'BADVERSION' };
    const before = { data: node.data, version: node.version, mzxid: node.mzxid, mtimeMs: node.mtimeMs };
    node.data = Uint8Array.from(data);
    node.version += 1;
    node.mzxid = zxid;
    node.mtimeMs = timeMs;
    undo.push(() => Object.assign(node, before));
    changes.push({ kind: 'dataChanged', path });
    applied.push({ op: 'set', path, data: node.data });
    return { ok: true, result: { op: 'set', stat: toStat(node) } };
  }

  private remove(
    path: string,
    version: number,
    zxid: number,
    undo: Array<() => void>,
    changes: TreeChange[],
    applied: AppliedOp[],
  ): Step {
    if (path === '/') return { ok: false, code: 'BADARGUMENTS' };
    const node = this.nodes.get(path);
    if (node === undefined) return { ok: false, code: 'NONODE' };
    if (version !== ANY_VERSION && node.version !== version) return { ok: false, code: 'BADVERSION' };
    if (node.children.size > 0) return { ok: false, code: 'NOTEMPTY' };
    const parent = this.nodes.get(parentOf(path))!;
    const before = { pzxid: parent.pzxid };
    this.nodes.delete(path);
    parent.children.delete(nameOf(path));
    // ZooKeeper leaves the stored child version alone on a delete (see toStat).
    parent.pzxid = zxid;
    if (node.ephemeralOwner !== null) this.untrackEphemeral(node.ephemeralOwner, path);
    undo.push(() => {
      this.nodes.set(path, node);
      parent.children.add(nameOf(path));
      parent.pzxid = before.pzxid;
      if (node.ephemeralOwner !== null) this.trackEphemeral(node.ephemeralOwner, path);
    });
    changes.push({ kind: 'deleted', path });
    applied.push({ op: 'delete', path });
    return { ok: true, result: { op: 'delete' } };
  }

  private trackEphemeral(session: SessionId, path: string): void {
    let paths = this.ephemeralsBySession.get(session);
    if (paths === undefined) this.ephemeralsBySession.set(session, (paths = new Set()));
    paths.add(path);
  }

  private untrackEphemeral(session: SessionId, path: string): void {
    const paths = this.ephemeralsBySession.get(session);
    if (paths === undefined) return;
    paths.delete(path);
    if (paths.size === 0) this.ephemeralsBySession.delete(session);
  }
}

function emptyNode(zxid: number, timeMs: number, owner: SessionId | null): ZNode {
  return {
    data: new Uint8Array(0),
    czxid: zxid,
    mzxid: zxid,
    pzxid: zxid,
    ctimeMs: timeMs,
    mtimeMs: timeMs,
    version: 0,
    cversion: 0,
    ephemeralOwner: owner,
    children: new Set(),
  };
}

function toStat(node: ZNode): Stat {
  return {
    czxid: node.czxid,
    mzxid: node.mzxid,
    pzxid: node.pzxid,
    ctimeMs: node.ctimeMs,
    mtimeMs: node.mtimeMs,
    version: node.version,
    // Created minus live children is the number deleted, so this is creations plus deletions, exactly as
    // ZooKeeper computes the cversion it reports from the one it stores.
    cversion: 2 * node.cversion - node.children.size,
    ephemeralOwner: node.ephemeralOwner,
    dataLength: node.data.length,
    numChildren: node.children.size,
  };
}
