// Kafka Connect's group protocol (protocol type "connect"): the worker state each worker puts in JoinGroup and
// the assignment the leader hands out in SyncGroup, byte for byte as Kafka's ConnectProtocol (version 0, the
// eager protocol named "default") and IncrementalCooperativeConnectProtocol (version 1 "compatible", version 2
// "sessioned") write them, so Brook workers and Kafka's could read each other's metadata.
//
// Worker state:  version int16, url string, config offset int64, and from version 1 the worker's current
//                assignment as nullable bytes (a serialized version-1 assignment; null when empty).
// Assignment:    version int16, error int16, leader string, leader url string, config offset int64,
//                assignment [connector string, tasks [int32]], and from version 1 revoked (same shape, both
//                nullable arrays) and the scheduled delay int32. Task -1 stands for the connector itself.

import { Reader, Writer } from '../../../protocol/primitives/index.js';
import type { ConnectorTaskId } from '../herder.js';

export const CONNECT_PROTOCOL_TYPE = 'connect';
/** The task number that stands for the connector instance in an assignment (Kafka's CONNECTOR_TASK). */
export const CONNECTOR_TASK = -1;
/** Assignment error: the leader could not read the config topic as far as a member had (CONFIG_MISMATCH). */
export const CONFIG_MISMATCH = 1;

/** connect.protocol values and the JoinGroup protocol names and versions they offer, most preferred first. */
export type ConnectProtocolMode = 'eager' | 'compatible' | 'sessioned';
export const PROTOCOL_VERSIONS: Record<string, number> = { default: 0, compatible: 1, sessioned: 2 };

export function offeredProtocols(mode: ConnectProtocolMode): string[] {
  if (mode === 'eager') return ['default'];
  if (mode === 'compatible') return ['compatible', 'default'];
  return ['sessioned', 'compatible', 'default'];
}

/** Connectors and tasks a worker runs (or is told to start or stop). */
export interface WorkUnits {
  connectors: string[];
  tasks: ConnectorTaskId[];
}

export interface ConnectAssignment extends WorkUnits {
  version: number;
  error: number;
  leader: string;
  leaderUrl: string;
  configOffset: number;
  revoked: WorkUnits;
  /** Milliseconds until the leader wants the group to rebalance again (KIP-415 scheduled rebalance). */
  delayMs: number;
}

export interface WorkerState {
  version: number;
  url: string;
  configOffset: number;
  /** What the worker runs now (from version 1; empty for the eager protocol). */
  assignment: WorkUnits;
}

export function emptyUnits(): WorkUnits {
  return { connectors: [], tasks: [] };
}

export function encodeWorkerState(version: number, state: Omit<WorkerState, 'version'>): Buffer {
  const w = new Writer(256).int16(version).string(state.url).int64(BigInt(state.configOffset));
  if (version >= 1) {
    const held = state.assignment;
    const bytes =
      held.connectors.length === 0 && held.tasks.length === 0
        ? null
        : encodeAssignment({
            version: 1,
            error: 0,
            leader: '',
            leaderUrl: '',
            configOffset: state.configOffset,
            connectors: held.connectors,
            tasks: held.tasks,
            revoked: emptyUnits(),
            delayMs: 0,
          });
    w.nullableBytes(bytes);
  }
  return w.toBuffer();
}

export function decodeWorkerState(bytes: Buffer): WorkerState {
  const r = new Reader(bytes);
  const version = r.int16();
  if (version < 0) throw new Error(`Unsupported subscription version: ${version}`);
  const url = r.string();
  const configOffset = Number(r.int64());
  let assignment = emptyUnits();
  if (version >= 1 && r.remaining > 0) {
    const held = r.nullableBytes();
    if (held !== null) {
      const a = decodeAssignment(Buffer.from(held));
      assignment = { connectors: a.connectors, tasks: a.tasks };
    }
  }
  return { version, url, configOffset, assignment };
}

function writeUnits(w: Writer, units: WorkUnits, nullable: boolean): void {
  const byConnector = new Map<string, number[]>();
  for (const c of units.connectors) byConnector.set(c, [CONNECTOR_TASK]);
  for (const t of units.tasks) {
    let list = byConnector.get(t.connector);
    if (list === undefined) byConnector.set(t.connector, (list = []));
    list.push(t.task);
  }
  if (nullable && byConnector.size === 0) {
    w.nullableArrayCount(null);
    return;
  }
  w.arrayCount(byConnector.size);
  for (const [connector, tasks] of byConnector) {
    w.string(connector).arrayCount(tasks.length);
    for (const t of tasks) w.int32(t);
  }
}

function readUnits(r: Reader, nullable: boolean): WorkUnits {
  const out = emptyUnits();
  const count = nullable ? r.nullableArrayCount(4) : r.arrayCount(4);
  for (let i = 0; i < count; i++) {
    const connector = r.string();
    const n = r.arrayCount(4);
    for (let j = 0; j < n; j++) {
      const task = r.int32();
      if (task === CONNECTOR_TASK) out.connectors.push(connector);
      else out.tasks.push({ connector, task });
    }
  }
  return out;
}

export function encodeAssignment(a: ConnectAssignment): Buffer {
  const w = new Writer(256)
    .int16(a.version)
    .int16(a.error)
    .string(a.leader)
    .string(a.leaderUrl)
    .int64(BigInt(a.configOffset));
  writeUnits(w, a, a.version >= 1);
  if (a.version >= 1) {
    writeUnits(w, a.revoked, true);
    w.int32(a.delayMs);
  }
  return w.toBuffer();
}

export function decodeAssignment(bytes: Buffer): ConnectAssignment {
  const r = new Reader(bytes);
  const version = r.int16();
  if (version < 0) throw new Error(`Unsupported assignment version: ${version}`);
  const error = r.int16();
  const leader = r.string();
  const leaderUrl = r.string();
  const configOffset = Number(r.int64());
  const units = readUnits(r, version >= 1);
  let revoked = emptyUnits();
  let delayMs = 0;
  if (version >= 1) {
    // Kafka tolerates missing trailing fields with their defaults (TOLERATE_MISSING_FIELDS_WITH_DEFAULTS).
    if (r.remaining > 0) revoked = readUnits(r, true);
    if (r.remaining >= 4) delayMs = r.int32();
  }
  return { version, error, leader, leaderUrl, configOffset, ...units, revoked, delayMs };
}
