// The files of the in-process store in its data directory (by default `__brook_metadata` under the first
// log dir), so that topics and their state survive a restart of a single-node Brook.
//
// Format (version 1), two files:
// - `snapshot.json`: the whole tree at a zxid, written to `snapshot.json.tmp`, fsynced, renamed over the old
//   one and the directory fsynced, so a crash leaves either the old or the new snapshot, never half of one.
//   { "format": 1, "zxid", "nextSessionNumber", "root": { "cversion", "pzxid" }, "nodes": [ { "path",
//   "data" (base64), "czxid", "mzxid", "pzxid", "ctimeMs", "mtimeMs", "version", "cversion",
//   "ephemeralOwner" } ] } with nodes sorted so that parents come first.
// - `transactions.log`: one line per committed transaction after the snapshot, `<crc32 as 8 hex digits> <json>`
//   where json is { "zxid", "timeMs", "ops": [ { "op": "create", "path", "data", "owner" } | { "op": "set",
//   "path", "data" } | { "op": "delete", "path" } ] }. A line is written when the transaction commits and
//   fsynced before its caller hears of success. The fsync is a group commit run off the event loop: every line
//   written before one fdatasync starts is covered by it, so concurrent transactions share one disk flush and
//   the broker's thread never waits on the disk. Recovery stops at the first line that is torn or fails its CRC
//   (the tail of a crash) and cuts the file there.
//
// A third file, `.lock`, holds the PID of the process that has the directory open, so that a second broker
// started on the same log dir stops at once instead of interleaving its writes. A lock whose process is gone
// (a crash) is taken over.
//
// Ephemeral nodes are written like the others, because their creation moves their parent's child version
// (and so sequential names); recovery replays them and the store then deletes them all, since no session
// survives a restart. This module owns only the bytes on disk; it holds no tree.

import {
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { AppliedOp, NodeRecord, Transaction } from './data-tree.js';

export const METADATA_DIR_NAME = '__brook_metadata';
const SNAPSHOT_FILE = 'snapshot.json';
const LOG_FILE = 'transactions.log';
const LOCK_FILE = '.lock';
const FORMAT = 1;

export interface Snapshot {
  readonly zxid: number;
  readonly nextSessionNumber: number;
  readonly root: { readonly cversion: number; readonly pzxid: number };
  readonly nodes: NodeRecord[];
}

export interface Recovered {
  readonly snapshot: Snapshot | null;
  /** Transactions after the snapshot, in order. */
  readonly transactions: Transaction[];
}

/** Thrown by open when another live process has the directory open. */
export class MetadataLockedError extends Error {
  override name = 'MetadataLockedError';
}

/** Thrown when the files exist but cannot be what this module wrote (not a torn tail: that is repaired). */
export class MetadataCorruptError extends Error {
  override name = 'MetadataCorruptError';
}

interface DurableWaiter {
  readonly line: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

export class MetadataFiles {
  private logFd: number;
  private logBytes: number;
  /** Lines written so far, and how many of them an fdatasync (or a snapshot) has made durable. */
  private linesWritten = 0;
  private linesDurable = 0;
  private syncing = false;
  private flushes = 0;
  private closeAfterSync: number | null = null;
  private failure: Error | null = null;
  private readonly waiters: DurableWaiter[] = [];

  private constructor(
    private readonly dir: string,
    private readonly fsync: boolean,
    logFd: number,
    logBytes: number,
  ) {
    this.logFd = logFd;
    this.logBytes = logBytes;
  }

  /** Opens (creating) the directory, reads what it holds and cuts a torn log tail. */
  static open(dir: string, fsync: boolean): { files: MetadataFiles; recovered: Recovered } {
    mkdirSync(dir, { recursive: true });
    takeLock(dir);
    const snapshot = readSnapshot(join(dir, SNAPSHOT_FILE));
    const logPath = join(dir, LOG_FILE);
    const { transactions, validBytes } = readLog(logPath, snapshot?.zxid ?? 0);
    const fd = openSync(logPath, 'a+');
    ftruncateSync(fd, validBytes);
    if (fsync) fdatasyncSync(fd);
    return { files: new MetadataFiles(dir, fsync, fd, validBytes), recovered: { snapshot, transactions } };
  }

  get logSizeBytes(): number {
    return this.logBytes;
  }

  /** Group-commit flushes (fdatasync calls) so far; fewer than transactions when writes overlap. */
  get flushCount(): number {
    return this.flushes;
  }

  /** Writes one committed transaction to the log (the page cache); durable() says when it is on disk. */
  append(txn: Transaction): void {
    if (this.failure !== null) throw this.failure;
    const json = JSON.stringify({ zxid: txn.zxid, timeMs: txn.timeMs, ops: txn.ops.map(encodeOp) });
    const line = Buffer.from(`${crcHex(json)} ${json}\n`, 'utf8');
    let written = 0;
    while (written < line.length) written += writeSync(this.logFd, line, written);
    this.logBytes += line.length;
    this.linesWritten += 1;
  }

  /** Settles once every line written so far is on disk; rejects if the flush fails. */
  durable(): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (!this.fsync || this.linesDurable >= this.linesWritten) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ line: this.linesWritten, resolve, reject });
      this.flush();
    });
  }

  private flush(): void {
    if (this.syncing || this.waiters.length === 0) return;
    this.syncing = true;
    this.flushes += 1;
    const covered = this.linesWritten;
    fdatasync(this.logFd, (error) => {
      this.syncing = false;
      if (this.closeAfterSync !== null) {
        closeSync(this.closeAfterSync);
        this.closeAfterSync = null;
      }
      if (error) {
        this.fail(error);
        return;
      }
      this.markDurable(covered);
      if (this.logFd >= 0) this.flush();
    });
  }

  private markDurable(lines: number): void {
    this.linesDurable = Math.max(this.linesDurable, lines);
    while (this.waiters.length > 0 && this.waiters[0]!.line <= this.linesDurable)
      this.waiters.shift()!.resolve();
  }

  private fail(error: Error): void {
    this.failure = error;
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  /** Replaces the snapshot atomically, then empties the log it covers. */
  writeSnapshot(snapshot: Snapshot): void {
    if (this.failure !== null) throw this.failure;
    const body = JSON.stringify({
      format: FORMAT,
      zxid: snapshot.zxid,
      nextSessionNumber: snapshot.nextSessionNumber,
      root: snapshot.root,
      nodes: snapshot.nodes.map((n) => ({ ...n, data: Buffer.from(n.data).toString('base64') })),
    });
    const finalPath = join(this.dir, SNAPSHOT_FILE);
    const tmpPath = `${finalPath}.tmp`;
    const fd = openSync(tmpPath, 'w');
    try {
      const bytes = Buffer.from(body, 'utf8');
      let written = 0;
      while (written < bytes.length) written += writeSync(fd, bytes, written);
      if (this.fsync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmpPath, finalPath);
    if (this.fsync) syncDirectory(this.dir);
    // The snapshot holds every transaction written so far, so they are all durable now. Records up to its
    // zxid are redundant in the log; recovery skips them anyway, so a crash before this truncation is harmless.
    this.markDurable(this.linesWritten);
    ftruncateSync(this.logFd, 0);
    if (this.fsync) fdatasyncSync(this.logFd);
    this.logBytes = 0;
  }

  /** Flushes what is pending (synchronously: this is shutdown) and closes the log. */
  close(): void {
    if (this.logFd < 0) return;
    if (this.failure === null && this.fsync && this.linesDurable < this.linesWritten) {
      try {
        fdatasyncSync(this.logFd);
        this.markDurable(this.linesWritten);
      } catch (e) {
        this.fail(e as Error);
      }
    }
    const fd = this.logFd;
    this.logFd = -1;
    releaseLock(this.dir);
    // An fdatasync still running on the descriptor must finish before it is closed: the number could
    // otherwise be reused by another file under that call.
    if (this.syncing) this.closeAfterSync = fd;
    else closeSync(fd);
  }
}

function takeLock(dir: string): void {
  const path = join(dir, LOCK_FILE);
  try {
    writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
  // The same process may reopen the directory: that is how tests and the simulation model a crash.
  if (Number.isSafeInteger(holder) && holder !== process.pid && processAlive(holder)) {
    throw new MetadataLockedError(`${dir} is in use by process ${holder}`);
  }
  writeFileSync(path, `${process.pid}\n`);
}

function releaseLock(dir: string): void {
  const path = join(dir, LOCK_FILE);
  try {
    if (Number.parseInt(readFileSync(path, 'utf8'), 10) === process.pid) unlinkSync(path);
  } catch {
    // Already gone.
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else, which still means the directory is in use.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function crcHex(text: string): string {
  return (crc32(text) >>> 0).toString(16).padStart(8, '0');
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function encodeOp(op: AppliedOp): object {
  switch (op.op) {
    case 'create':
      return { op: 'create', path: op.path, data: Buffer.from(op.data).toString('base64'), owner: op.owner };
    case 'set':
      return { op: 'set', path: op.path, data: Buffer.from(op.data).toString('base64') };
    case 'delete':
      return { op: 'delete', path: op.path };
  }
}

function readSnapshot(path: string): Snapshot | null {
  if (!existsSync(path)) return null;
  const text = readFileSync(path, 'utf8');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new MetadataCorruptError(`snapshot ${path} is not JSON: ${(e as Error).message}`);
  }
  const s = raw as Record<string, unknown>;
  if (s.format !== FORMAT || !Number.isSafeInteger(s.zxid) || !Array.isArray(s.nodes)) {
    throw new MetadataCorruptError(`snapshot ${path} has an unknown format`);
  }
  const root = s.root as { cversion: number; pzxid: number };
  const nodes = (s.nodes as Array<Record<string, unknown>>).map(
    (n): NodeRecord => ({
      path: String(n.path),
      data: new Uint8Array(Buffer.from(String(n.data), 'base64')),
      czxid: Number(n.czxid),
      mzxid: Number(n.mzxid),
      pzxid: Number(n.pzxid),
      ctimeMs: Number(n.ctimeMs),
      mtimeMs: Number(n.mtimeMs),
      version: Number(n.version),
      cversion: Number(n.cversion),
      ephemeralOwner: n.ephemeralOwner === null ? null : String(n.ephemeralOwner),
    }),
  );
  return { zxid: s.zxid as number, nextSessionNumber: Number(s.nextSessionNumber), root, nodes };
}

function readLog(path: string, afterZxid: number): { transactions: Transaction[]; validBytes: number } {
  if (!existsSync(path)) return { transactions: [], validBytes: 0 };
  const bytes = readFileSync(path);
  const transactions: Transaction[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const end = bytes.indexOf(0x0a, offset);
    if (end < 0) break;
    const line = bytes.subarray(offset, end).toString('utf8');
    const txn = parseLine(line);
    if (txn === null) break;
    if (txn.zxid > afterZxid) transactions.push(txn);
    offset = end + 1;
  }
  return { transactions, validBytes: offset };
}

function parseLine(line: string): Transaction | null {
  const space = line.indexOf(' ');
  if (space !== 8) return null;
  const json = line.slice(9);
  if (crcHex(json) !== line.slice(0, 8)) return null;
  const raw = JSON.parse(json) as { zxid: number; timeMs: number; ops: Array<Record<string, unknown>> };
  const ops = raw.ops.map((o): AppliedOp => {
    const path = String(o.path);
    if (o.op === 'create') {
      const data = new Uint8Array(Buffer.from(String(o.data), 'base64'));
      return { op: 'create', path, data, owner: o.owner === null ? null : String(o.owner) };
    }
    if (o.op === 'set')
      return { op: 'set', path, data: new Uint8Array(Buffer.from(String(o.data), 'base64')) };
    return { op: 'delete', path };
  });
  return { zxid: raw.zxid, timeMs: raw.timeMs, ops };
}
