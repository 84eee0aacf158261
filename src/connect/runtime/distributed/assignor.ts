// The leader's assignment of connectors and tasks to workers: incremental cooperative (KIP-415, the
// "compatible" and "sessioned" protocols) and eager (the "default" protocol).
//
// Incremental cooperative, per rebalance:
// - what members run is kept; what no longer exists in the configs is revoked from whoever runs it, and a unit
//   two members claim stays with one of them;
// - units that were assigned in the leader's previous round to a worker that is gone are "lost": the first time,
//   the leader waits scheduled.rebalance.max.delay.ms for that worker to come back (every member is told the
//   delay and rejoins when it ends); a worker that joins meanwhile receives them; once the delay is over they go
//   to the least loaded workers;
// - other unassigned units (new connectors and tasks, units revoked in the previous round) go to the least
//   loaded workers, connectors and tasks balanced separately;
// - when nothing is lost or waiting and the running units are uneven by more than one (a worker joined, perhaps
//   together with new work), the most loaded workers give units up: they are only revoked in this round, and assigned in the next, which the
//   revoking workers start by rejoining at once.
// Eager: every member has stopped everything before joining; every unit is assigned afresh, round robin.
//
// The leader keeps its previous round (LeaderMemory) only while it stays leader; a new leader starts without
// one, so units of a worker that died with the old leader are assigned at once (as in Kafka).

import type { ConnectorTaskId } from '../herder.js';
import { type ConnectAssignment, emptyUnits, type WorkUnits } from './connect-protocol.js';

export interface MemberInfo {
  memberId: string;
  url: string;
  configOffset: number;
  /** What the member reports running (empty under the eager protocol). */
  owned: WorkUnits;
}

/** The configured work: every connector and its committed task count. */
export interface ConfiguredWork {
  connectors: Map<string, number>;
}

export interface LeaderMemory {
  /** unit key -> member id, after the previous round's revocations and assignments. */
  owners: Map<string, string>;
  members: Set<string>;
  /** Lost units waiting for their worker until delayDeadlineMs. */
  lost: Set<string>;
  delayDeadlineMs: number | null;
}

export interface AssignmentResult {
  assignments: Map<string, ConnectAssignment>;
  memory: LeaderMemory;
}

const CONNECTOR_PREFIX = 'c\u0000';
const TASK_PREFIX = 't\u0000';

export function connectorKey(name: string): string {
  return `${CONNECTOR_PREFIX}${name}`;
}

export function taskKey(id: ConnectorTaskId): string {
  return `${taskKeyPrefix(id.connector)}${id.task}`;
}

/** What the keys of every task of a connector start with. */
export function taskKeyPrefix(connector: string): string {
  return `${TASK_PREFIX}${connector}\u0000`;
}

function isConnectorKey(key: string): boolean {
  return key.startsWith(CONNECTOR_PREFIX);
}

function unitsOf(keys: Iterable<string>): WorkUnits {
  const out = emptyUnits();
  for (const k of keys) {
    if (isConnectorKey(k)) out.connectors.push(k.slice(CONNECTOR_PREFIX.length));
    else {
      const rest = k.slice(TASK_PREFIX.length);
      const sep = rest.lastIndexOf('\u0000');
      out.tasks.push({ connector: rest.slice(0, sep), task: Number(rest.slice(sep + 1)) });
    }
  }
  out.connectors.sort();
  out.tasks.sort((a, b) =>
    a.connector === b.connector ? a.task - b.task : a.connector < b.connector ? -1 : 1,
  );
  return out;
}

function keysOf(units: WorkUnits): string[] {
  return [...units.connectors.map(connectorKey), ...units.tasks.map(taskKey)];
}

function configuredKeys(work: ConfiguredWork): Set<string> {
  const out = new Set<string>();
  for (const [name, tasks] of [...work.connectors].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    out.add(connectorKey(name));
    for (let t = 0; t < tasks; t++) out.add(taskKey({ connector: name, task: t }));
  }
  return out;
}

interface Plan {
  /** What each member will run after this round (kept + assigned). */
  holds: Map<string, Set<string>>;
  assigned: Map<string, Set<string>>;
  revoked: Map<string, Set<string>>;
}

/** Gives each unit to the member holding the fewest units of its kind (connectors, tasks), ties by member id. */
function spread(units: string[], plan: Plan, to: string[]): void {
  for (const unit of units) {
    const kind = isConnectorKey(unit);
    let best: string | null = null;
    let bestLoad = Number.POSITIVE_INFINITY;
    for (const m of to) {
      let load = 0;
      for (const k of plan.holds.get(m)!) if (isConnectorKey(k) === kind) load++;
      if (load < bestLoad) {
        best = m;
        bestLoad = load;
      }
    }
    if (best === null) return;
    plan.holds.get(best)!.add(unit);
    plan.assigned.get(best)!.add(unit);
  }
}

/** Revokes units from members holding more than their share of a kind, when the load differs by more than one. */
function revokeForBalance(plan: Plan, members: string[]): void {
  for (const kind of [true, false]) {
    const load = (m: string) => [...plan.holds.get(m)!].filter((k) => isConnectorKey(k) === kind);
    const total = members.reduce((n, m) => n + load(m).length, 0);
    const ceil = Math.ceil(total / members.length);
    const floor = Math.floor(total / members.length);
    const min = Math.min(...members.map((m) => load(m).length));
    if (Math.max(...members.map((m) => load(m).length)) - min <= 1) continue;
    // Members above the ceiling give up the excess; if some member is below the floor, those at the ceiling
    // give one more until the deficit is covered.
    let deficit = members.reduce((n, m) => n + Math.max(0, floor - load(m).length), 0);
    for (const m of members) {
      const held = load(m).sort();
      let give = Math.max(0, held.length - ceil);
      deficit -= give;
      if (deficit > 0 && held.length - give > floor) {
        give++;
        deficit--;
      }
      for (const unit of held.slice(held.length - give)) {
        plan.holds.get(m)!.delete(unit);
        plan.revoked.get(m)!.add(unit);
      }
    }
  }
}

export function assignIncremental(
  leaderId: string,
  leaderUrl: string,
  configOffset: number,
  version: number,
  members: MemberInfo[],
  work: ConfiguredWork,
  memory: LeaderMemory | null,
  maxDelayMs: number,
  nowMs: number,
): AssignmentResult {
  const ids = members.map((m) => m.memberId).sort();
  const configured = configuredKeys(work);
  const plan: Plan = { holds: new Map(), assigned: new Map(), revoked: new Map() };
  for (const id of ids) {
    plan.holds.set(id, new Set());
    plan.assigned.set(id, new Set());
    plan.revoked.set(id, new Set());
  }
  // What members run now: kept if still configured and not claimed by another member first.
  const active = new Set<string>();
  for (const m of [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : 1))) {
    for (const unit of keysOf(m.owned)) {
      if (!configured.has(unit) || active.has(unit)) plan.revoked.get(m.memberId)!.add(unit);
      else {
        active.add(unit);
        plan.holds.get(m.memberId)!.add(unit);
      }
    }
  }
  const unassigned = [...configured].filter((u) => !active.has(u));
  // Lost: assigned by this leader last round to a worker that is not in the group any more.
  const lost = new Set<string>(memory?.lost ?? []);
  if (memory !== null) {
    for (const [unit, owner] of memory.owners) {
      if (!ids.includes(owner) && configured.has(unit) && !active.has(unit)) lost.add(unit);
    }
  }
  for (const u of [...lost]) if (!configured.has(u) || active.has(u)) lost.delete(u);
  let delayDeadlineMs: number | null = null;
  let waiting = new Set<string>();
  if (lost.size > 0) {
    delayDeadlineMs = memory?.delayDeadlineMs ?? nowMs + maxDelayMs;
    if (nowMs >= delayDeadlineMs || maxDelayMs === 0) {
      delayDeadlineMs = null;
    } else {
      // Workers that joined since the last round take the lost units at once (a restarted worker comes back).
      const newcomers = ids.filter((id) => !(memory?.members.has(id) ?? true));
      if (newcomers.length > 0) {
        spread(
          [...lost].filter((u) => unassigned.includes(u)),
          plan,
          newcomers,
        );
        delayDeadlineMs = null;
      } else {
        waiting = lost;
      }
    }
  }
  const toAssign = unassigned.filter(
    (u) => !waiting.has(u) && ![...plan.assigned.values()].some((s) => s.has(u)),
  );
  spread(toAssign, plan, ids);
  const revokedSome = [...plan.revoked.values()].some((s) => s.size > 0);
  // New units handed out in this round do not hold the balancing back (Kafka's performTaskRevocation balances the
  // running units whatever else is assigned): a worker that joins together with a new connector would otherwise
  // get only the new units and leave the others where they were.
  if (waiting.size === 0 && !revokedSome) revokeForBalance(plan, ids);
  const delayMs = delayDeadlineMs === null ? 0 : Math.max(0, delayDeadlineMs - nowMs);
  const assignments = new Map<string, ConnectAssignment>();
  for (const id of ids) {
    assignments.set(id, {
      version,
      error: 0,
      leader: leaderId,
      leaderUrl,
      configOffset,
      ...unitsOf(plan.assigned.get(id)!),
      revoked: unitsOf(plan.revoked.get(id)!),
      delayMs,
    });
  }
  const owners = new Map<string, string>();
  for (const id of ids) for (const u of plan.holds.get(id)!) owners.set(u, id);
  // Units still waiting keep their old owner in memory so they stay "lost" next round.
  for (const u of waiting) owners.set(u, memory?.owners.get(u) ?? '');
  return {
    assignments,
    memory: {
      owners,
      members: new Set(ids),
      lost: waiting,
      delayDeadlineMs: waiting.size > 0 ? delayDeadlineMs : null,
    },
  };
}

/** The eager protocol: every unit assigned afresh, connectors and tasks each round robin over the members. */
export function assignEager(
  leaderId: string,
  leaderUrl: string,
  configOffset: number,
  members: MemberInfo[],
  work: ConfiguredWork,
): Map<string, ConnectAssignment> {
  const ids = members.map((m) => m.memberId).sort();
  const out = new Map<string, ConnectAssignment>();
  for (const id of ids) {
    out.set(id, {
      version: 0,
      error: 0,
      leader: leaderId,
      leaderUrl,
      configOffset,
      connectors: [],
      tasks: [],
      revoked: emptyUnits(),
      delayMs: 0,
    });
  }
  let c = 0;
  let t = 0;
  for (const [name, tasks] of [...work.connectors].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    out.get(ids[c++ % ids.length]!)!.connectors.push(name);
    for (let task = 0; task < tasks; task++)
      out.get(ids[t++ % ids.length]!)!.tasks.push({ connector: name, task });
  }
  return out;
}
