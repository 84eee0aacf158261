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
//   "path", "data" } | { "op": "delete", "path" } ] }. A line is appended and fsynced before the transaction's
//   caller hears of success. Recovery stops at the first line that is torn or fails its CRC (the tail of a
//   crash) and cuts the file there.
//
// Ephemeral nodes are written like the others, because their creation moves their parent's child version
// (and so sequential names); recovery replays them and the store then deletes them all, since no session
// survives a restart. This module owns only the bytes on disk; it holds no tree.

import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { AppliedOp, NodeRecord, Transaction } from './data-tree.js';

export const METADATA_DIR_NAME = '__brook_metadata';
const SNAPSHOT_FILE = 'snapshot.json';
const LOG_FILE = 'transactions.log';
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

/** Thrown when the files exist but cannot be what this module wrote (not a torn tail: that is repaired). */
export class MetadataCorruptError extends Error {
  override name = 'MetadataCorruptError';
}

export class MetadataFiles {
  private logFd: number;
  private logBytes: number;

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

  /** Appends one committed transaction durably. */
  append(txn: Transaction): void {
    const json = JSON.stringify({ zxid: txn.zxid, timeMs: txn.timeMs, ops: txn.ops.map(encodeOp) });
    const line = Buffer.from(`${crcHex(json)} ${json}\n`, 'utf8');
    let written = 0;
    while (written < line.length) written += writeSync(this.logFd, line, written);
    if (this.fsync) fdatasyncSync(this.logFd);
    this.logBytes += line.length;
  }

  /** Replaces the snapshot atomically, then empties the log it covers. */
  writeSnapshot(snapshot: Snapshot): void {
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
    // Records up to snapshot.zxid are now redundant; recovery skips them anyway, so a crash before this
    // truncation is harmless.
    ftruncateSync(this.logFd, 0);
    if (this.fsync) fdatasyncSync(this.logFd);
    this.logBytes = 0;
  }

  close(): void {
    if (this.logFd >= 0) closeSync(this.logFd);
    this.logFd = -1;
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
