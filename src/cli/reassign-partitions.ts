// `brook reassign-partitions` (kafka-reassign-partitions.sh): move partition replicas between brokers through
// AlterPartitionReassignments and ListPartitionReassignments (KIP-455).
//
// Actions, one per run, with Kafka's files and output lines:
//   --generate  --topics-to-move-json-file F --broker-list 1,2,3: prints the current assignment of the topics
//               and a proposal spreading them over the listed brokers (Kafka's assignment rules, racks unless
//               --disable-rack-aware). Changes nothing.
//   --execute   --reassignment-json-file F: prints the current assignment (to roll back with), then starts the
//               moves. Refused while other reassignments run, unless --additional.
//   --verify    --reassignment-json-file F: for each partition, completed or still in progress.
//   --list      the reassignments in progress, with their adding and removing replicas.
//   --cancel    --reassignment-json-file F: cancels the file's moves that are still in progress.
//
// The reassignment file is Kafka's: {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]},
// with an optional "log_dirs" list per partition: one entry per replica, "any" or an absolute log directory of
// that replica's broker. As Kafka's tool, --execute then sends AlterReplicaLogDirs to those brokers after starting
// the reassignment, retrying every 100 ms while a broker answers REPLICA_NOT_AVAILABLE (the replica is not there
// yet; the broker creates it in that directory when it comes) until --timeout; any other error fails the run
// ("Failed to alter dir for <topic>-<partition>-<broker>"). --verify also reports each such replica: completed,
// still in progress, moving elsewhere, not being moved, or not found. --replica-alter-log-dirs-throttle N sets
// replica.alter.log.dirs.io.max.bytes.per.second on the brokers with such moves (cleared by --verify).
//
// Throttles, as Kafka's tool sets them: --execute --throttle N marks the moving partitions' current replicas in
// leader.replication.throttled.replicas and their new replicas in follower.replication.throttled.replicas (topic
// configs) and sets leader.replication.throttled.rate and follower.replication.throttled.rate to N B/s on every
// broker involved. --verify clears them once no partition of the file is still moving (unless
// --preserve-throttles): the rates on every broker of the cluster, the replica lists on the file's topics.

import { readFileSync } from 'node:fs';
import { Admin } from '../client/admin.js';
import type { KafkaProtocolError } from '../client/errors.js';
import type { BrokerId } from '../common/ids.js';
import { systemRandom } from '../controller/random.js';
import { assignReplicas } from '../controller/replica-assignment.js';
import { ErrorCode } from '../protocol/errors.js';
import { type ParsedArgs, UsageError } from './args.js';
import { clientOptions, err, newClient, out, runTool, type Tool } from './client-tool.js';
import { Progress } from './progress.js';

const ACTIONS = ['generate', 'execute', 'verify', 'list', 'cancel'] as const;

const tool: Tool = {
  name: 'reassign-partitions',
  summary:
    'Move partitions between brokers: generate a proposal, execute it, verify it, list or cancel moves in progress.',
  specs: {
    generate: {
      help: 'Generate a candidate assignment of the topics to move onto the brokers in --broker-list.',
    },
    execute: { help: 'Start the reassignment in --reassignment-json-file.' },
    verify: { help: 'Check whether the reassignment in --reassignment-json-file has completed.' },
    list: { help: 'List the partition reassignments in progress.' },
    cancel: { help: 'Cancel the moves of --reassignment-json-file that are still in progress.' },
    'reassignment-json-file': {
      value: true,
      help: 'The reassignment: {"version":1,"partitions":[{"topic":"foo","partition":1,"replicas":[1,2,3]}]}',
    },
    'topics-to-move-json-file': {
      value: true,
      help: 'With --generate, the topics to move: {"topics":[{"topic":"foo"},{"topic":"foo1"}],"version":1}',
    },
    'broker-list': { value: true, help: 'With --generate, the brokers to move the topics to: "0,1,2".' },
    'disable-rack-aware': { help: "With --generate, ignore the brokers' racks." },
    additional: { help: 'With --execute, start the moves even while other reassignments are in progress.' },
    throttle: {
      value: true,
      help: 'With --execute, the replication throttle in B/s for the brokers and replicas moving data.',
    },
    'replica-alter-log-dirs-throttle': {
      value: true,
      help: 'With --execute, the throttle in B/s of moves between log directories of one broker.',
    },
    'preserve-throttles': { help: 'With --verify, leave the throttles in place when the moves are done.' },
    timeout: {
      value: true,
      help: 'With --execute, the time in ms to wait for the reassignment to start (default 10000).',
    },
  },
  run,
};

export function runReassignPartitions(args: string[]): Promise<number> {
  return runTool(tool, args);
}

interface Move {
  topic: string;
  partition: number;
  replicas: number[];
  /** From "log_dirs": the directory of each replica, "any" for wherever its broker places it. */
  logDirs?: string[];
}

/** One replica to move to a given log directory of its broker (Kafka's TopicPartitionReplica and its dir). */
interface ReplicaDir {
  topic: string;
  partition: number;
  broker: number;
  logDir: string;
}

/** Kafka's TopicPartitionReplica text: `<topic>-<partition>-<broker>`. */
const replicaName = (r: ReplicaDir): string => `${r.topic}-${r.partition}-${r.broker}`;

function byReplica(a: ReplicaDir, b: ReplicaDir): number {
  return byTopicPartition(a, b) || a.broker - b.broker;
}

/** The replicas of `moves` whose "log_dirs" name a directory. */
export function replicaDirs(moves: readonly Move[]): ReplicaDir[] {
  const out: ReplicaDir[] = [];
  for (const m of moves) {
    m.logDirs?.forEach((logDir, i) => {
      if (logDir !== 'any')
        out.push({ topic: m.topic, partition: m.partition, broker: m.replicas[i]!, logDir });
    });
  }
  return out.sort(byReplica);
}

const name = (m: { topic: string; partition: number }): string => `${m.topic}-${m.partition}`;

function byTopicPartition(a: { topic: string; partition: number }, b: { topic: string; partition: number }) {
  return a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition;
}

/** Kafka's reassignment JSON, with "log_dirs" (always "any" here) so that Kafka's tool reads it back. */
export function reassignmentJson(moves: readonly Move[]): string {
  return JSON.stringify({
    version: 1,
    partitions: [...moves].sort(byTopicPartition).map((m) => ({
      topic: m.topic,
      partition: m.partition,
      replicas: m.replicas,
      log_dirs: m.replicas.map(() => 'any'),
    })),
  });
}

function readJson(path: string): unknown {
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${path} is not valid JSON: ${(e as Error).message}`);
  }
}

/** Reads and checks a reassignment file as Kafka's tool does. */
export function parseReassignment(path: string): Move[] {
  const data = readJson(path) as { version?: unknown; partitions?: unknown };
  if (data === null || typeof data !== 'object' || !Array.isArray(data.partitions)) {
    throw new UsageError(`${path}: expected {"version":1,"partitions":[...]}`);
  }
  if (data.version !== undefined && data.version !== 1) {
    throw new UsageError(`${path}: unsupported version ${String(data.version)}`);
  }
  const moves: Move[] = [];
  for (const p of data.partitions as Record<string, unknown>[]) {
    const replicas = p.replicas;
    if (
      typeof p.topic !== 'string' ||
      !Number.isInteger(p.partition) ||
      !Array.isArray(replicas) ||
      !replicas.every((r) => Number.isInteger(r))
    ) {
      throw new UsageError(`${path}: bad partition entry ${JSON.stringify(p)}`);
    }
    const move: Move = { topic: p.topic, partition: p.partition as number, replicas: replicas as number[] };
    if (p.log_dirs !== undefined) {
      const dirs = p.log_dirs;
      if (!Array.isArray(dirs) || dirs.length !== replicas.length) {
        throw new UsageError(
          `Size of replicas list ${JSON.stringify(replicas)} is different from size of log dirs list ${JSON.stringify(dirs)} for partition ${name(move)}`,
        );
      }
      if (!dirs.every((d) => typeof d === 'string' && d !== '')) {
        throw new UsageError(`${path}: log_dirs of ${name(move)} must be "any" or directories`);
      }
      move.logDirs = dirs as string[];
    }
    const repeated = replicas.find((r, i) => replicas.indexOf(r) !== i);
    if (repeated !== undefined) {
      throw new UsageError(
        `Partition replica lists may not contain duplicate entries: ${name(move)} contains multiple entries for ${repeated}.`,
      );
    }
    moves.push(move);
  }
  if (moves.length === 0) throw new UsageError('Partition reassignment list cannot be empty.');
  const seen = new Set<string>();
  const duplicates = moves.map(name).filter((n) => seen.size === seen.add(n).size);
  if (duplicates.length > 0) {
    throw new UsageError(
      `Partition reassignment list cannot contain duplicate topic partitions: ${duplicates.join(',')}`,
    );
  }
  return moves;
}

async function run(args: ParsedArgs): Promise<number> {
  const chosen = ACTIONS.filter((a) => args.has(a));
  if (chosen.length !== 1) {
    throw new UsageError(
      'Command must include exactly one action: --generate, --execute, --verify, --list, or --cancel',
    );
  }
  const action = chosen[0]!;
  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    switch (action) {
      case 'generate':
        return await generate(admin, args);
      case 'execute':
        return await execute(admin, args);
      case 'verify':
        return await verify(
          admin,
          parseReassignment(args.required('reassignment-json-file')),
          args.has('preserve-throttles'),
        );
      case 'list':
        return await list(admin);
      case 'cancel':
        return await cancel(admin, parseReassignment(args.required('reassignment-json-file')));
    }
  } finally {
    await admin.close();
  }
}

/** The current replicas of the moves' partitions; a missing topic or partition is an error. */
async function currentReplicas(admin: Admin, moves: readonly Move[]): Promise<Map<string, number[]>> {
  const topics = [...new Set(moves.map((m) => m.topic))];
  const current = new Map<string, number[]>();
  for (const t of await admin.describeTopics(topics)) {
    if (t.error !== null) throw new UsageError(`Topic ${t.topic} not found`);
    for (const p of t.partitions) current.set(name({ topic: t.topic, partition: p.partition }), p.replicas);
  }
  const missing = moves.filter((m) => !current.has(name(m)));
  if (missing.length > 0) throw new UsageError(`Unable to find partition: ${missing.map(name).join(',')}`);
  return current;
}

async function generate(admin: Admin, args: ParsedArgs): Promise<number> {
  const file = args.required('topics-to-move-json-file');
  const data = readJson(file) as { topics?: unknown };
  if (data === null || typeof data !== 'object' || !Array.isArray(data.topics)) {
    throw new UsageError(`${file}: expected {"topics":[{"topic":"foo"}],"version":1}`);
  }
  const topics = (data.topics as { topic?: unknown }[]).map((t) => {
    if (typeof t.topic !== 'string') throw new UsageError(`${file}: bad topic entry ${JSON.stringify(t)}`);
    return t.topic;
  });
  const brokerList = args
    .required('broker-list')
    .split(',')
    .map((s) => Number(s.trim()));
  if (brokerList.some((b) => !Number.isInteger(b) || b < 0)) {
    throw new UsageError(`--broker-list must be a comma-separated list of broker ids`);
  }
  if (new Set(brokerList).size !== brokerList.length) {
    throw new UsageError(`Duplicate broker ids in --broker-list: ${brokerList.join(',')}`);
  }
  const cluster = await admin.describeCluster();
  const known = new Map(cluster.brokers.map((b) => [b.nodeId, b.rack]));
  const unknown = brokerList.filter((b) => !known.has(b));
  if (unknown.length > 0)
    throw new UsageError(`The following brokers are not in the cluster: ${unknown.join(',')}`);
  const rackAware = !args.has('disable-rack-aware');
  const brokers = brokerList.map((id) => ({
    id: id as BrokerId,
    rack: rackAware ? (known.get(id) ?? null) : null,
  }));

  const current: Move[] = [];
  const proposed: Move[] = [];
  for (const t of await admin.describeTopics([...new Set(topics)])) {
    if (t.error !== null) throw new UsageError(`Topic ${t.topic} not found`);
    const partitions = [...t.partitions].sort((a, b) => a.partition - b.partition);
    for (const p of partitions)
      current.push({ topic: t.topic, partition: p.partition, replicas: p.replicas });
    const assigned = assignReplicas(
      brokers,
      { partitionCount: partitions.length, replicationFactor: partitions[0]?.replicas.length ?? 0 },
      systemRandom,
    );
    if (!assigned.ok) {
      err(`Error: ${assigned.errorMessage}`);
      return 1;
    }
    for (const [partition, replicas] of assigned.assignment)
      proposed.push({ topic: t.topic, partition, replicas });
  }
  out('Current partition replica assignment');
  out(reassignmentJson(current));
  out();
  out('Proposed partition reassignment configuration');
  out(reassignmentJson(proposed));
  return 0;
}

async function execute(admin: Admin, args: ParsedArgs): Promise<number> {
  const moves = parseReassignment(args.required('reassignment-json-file'));
  const timeoutMs = args.int('timeout', 10_000)!;
  if (!args.has('additional') && (await admin.listPartitionReassignments()).length > 0) {
    err(
      'Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one.',
    );
    return 1;
  }
  const current = await currentReplicas(admin, moves);
  out('Current partition replica assignment');
  out();
  out(reassignmentJson(moves.map((m) => ({ ...m, replicas: current.get(name(m))! }))));
  out();
  out('Save this to use as the --reassignment-json-file option during rollback');
  const throttle = args.get('throttle');
  if (throttle !== undefined) {
    const rate = Number(throttle);
    if (!Number.isSafeInteger(rate) || rate < 0)
      throw new UsageError(`--throttle must be bytes per second, not '${throttle}'`);
    out(
      'Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.',
    );
    const failed = await setThrottles(admin, moves, current, rate);
    if (failed !== null) {
      err(`Error setting the replication throttle: ${failed}`);
      return 1;
    }
    out(`The inter-broker throttle limit was set to ${rate} B/s`);
  }
  const dirMoves = replicaDirs(moves);
  const dirThrottle = args.get('replica-alter-log-dirs-throttle');
  if (dirThrottle !== undefined) {
    const rate = Number(dirThrottle);
    if (!Number.isSafeInteger(rate) || rate < 0) {
      throw new UsageError(
        `--replica-alter-log-dirs-throttle must be bytes per second, not '${dirThrottle}'`,
      );
    }
    if (dirMoves.length > 0) {
      const brokers = [...new Set(dirMoves.map((r) => r.broker))].sort((a, b) => a - b);
      const results = await admin.incrementalAlterConfigs(
        brokers.map((id) => ({
          type: 'broker' as const,
          name: String(id),
          ops: [
            {
              name: 'replica.alter.log.dirs.io.max.bytes.per.second',
              op: 'set' as const,
              value: String(rate),
            },
          ],
        })),
      );
      const failed = results.find((r) => r.error !== null);
      if (failed !== undefined) {
        err(`Error setting the log directory throttle: broker ${failed.name}: ${failed.error!.message}`);
        return 1;
      }
      out(`The replica-alter-dir throttle limit was set to ${rate} B/s`);
    }
  }
  const results = await admin.alterPartitionReassignments(moves, { timeoutMs });
  const code = reportResults(results, 'reassign', moves.length);
  if (code !== 0 || dirMoves.length === 0) return code;
  return await executeDirMoves(admin, dirMoves, timeoutMs);
}

/**
 * Kafka's executeMoves: AlterReplicaLogDirs for every replica with a directory, again every 100 ms for those whose
 * broker does not host them yet (REPLICA_NOT_AVAILABLE), until all started or the timeout passes.
 */
async function executeDirMoves(
  admin: Admin,
  replicas: readonly ReplicaDir[],
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let pending = [...replicas];
  for (;;) {
    const results = await admin.alterReplicaLogDirs(pending);
    const failed = results.find((r) => r.error !== null && r.error.code !== ErrorCode.REPLICA_NOT_AVAILABLE);
    if (failed !== undefined) {
      err(`Failed to alter dir for ${replicaName(failed)}: ${failed.error!.message}`);
      return 1;
    }
    const started = results.filter((r) => r.error === null).sort(byReplica);
    if (started.length > 0) {
      out(
        `Successfully started log directory move${started.length === 1 ? '' : 's'} for: ${started.map(replicaName).join(',')}`,
      );
    }
    pending = results.filter((r) => r.error !== null);
    if (pending.length === 0) return 0;
    if (Date.now() >= deadline) {
      err(
        `Timed out before log directory move${pending.length === 1 ? '' : 's'} could be started for: ${pending.map(replicaName).join(',')}`,
      );
      return 1;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Kafka's findLogDirMoveStates and replicaMoveStatesToString: each replica's current and future directory, from
 * DescribeLogDirs of its broker. Answers whether every move is done.
 */
async function verifyDirMoves(
  admin: Admin,
  replicas: readonly ReplicaDir[],
  progress: Progress,
): Promise<boolean> {
  const brokers = [...new Set(replicas.map((r) => r.broker))];
  const current = new Map<string, string>();
  const future = new Map<string, string>();
  const described = new Set<number>();
  for (const [i, broker] of brokers.entries()) {
    progress.update(`reading the log directories of broker ${broker} (${i + 1}/${brokers.length})`, true);
    let dirs: Awaited<ReturnType<Admin['describeLogDirs']>>;
    try {
      dirs = await admin.describeLogDirs([broker]);
    } catch {
      continue;
    }
    described.add(broker);
    for (const d of dirs) {
      if (d.error !== null) continue;
      for (const p of d.partitions) {
        const key = `${p.topic}-${p.partition}-${broker}`;
        (p.isFuture ? future : current).set(key, d.logDir);
      }
    }
  }
  progress.clear();
  let done = true;
  for (const r of replicas) {
    const key = replicaName(r);
    const at = current.get(key);
    const to = future.get(key);
    const tp = name(r);
    if (!described.has(r.broker) || (at === undefined && to === undefined)) {
      done = false;
      out(`Partition ${tp} cannot be found in any live log directory on broker ${r.broker}.`);
    } else if (at === undefined) {
      done = false;
      out(
        `Partition ${tp} is not found in any live log dir on broker ${r.broker}. There is likely an offline log directory on the broker.`,
      );
    } else if (to === undefined) {
      if (at === r.logDir) out(`Reassignment of replica ${key} completed successfully.`);
      else {
        done = false;
        out(`Partition ${tp} on broker ${r.broker} is not being moved from log dir ${at} to ${r.logDir}.`);
      }
    } else {
      done = false;
      if (to === r.logDir) out(`Reassignment of replica ${key} is still in progress.`);
      else
        out(`Partition ${tp} on broker ${r.broker} is being moved to log dir ${to} instead of ${r.logDir}.`);
    }
  }
  return done;
}

/** Prints the outcome of AlterPartitionReassignments as Kafka's tool does; 1 when a partition failed. */
function reportResults(
  results: { topic: string; partition: number; error: KafkaProtocolError | null }[],
  verb: 'reassign' | 'cancel',
  count: number,
): number {
  const failed = results.filter((r) => r.error !== null).sort(byTopicPartition);
  const succeeded = results.filter((r) => r.error === null).sort(byTopicPartition);
  const plural = count === 1 ? '' : 's';
  if (succeeded.length > 0) {
    out(
      verb === 'reassign'
        ? `Successfully started partition reassignment${plural} for ${succeeded.map(name).join(',')}`
        : `Successfully cancelled partition reassignment${plural} for: ${succeeded.map(name).join(',')}`,
    );
  }
  if (failed.length === 0) return 0;
  err(
    verb === 'reassign' ? 'Error reassigning partition(s):' : 'Error cancelling partition reassignment(s):',
  );
  for (const f of failed) err(`${name(f)}: ${f.error!.message}`);
  return 1;
}

/** Kafka's calculateLeaderThrottles / calculateFollowerThrottles per topic, then the rates on every broker moved. */
export async function setThrottles(
  admin: Admin,
  moves: readonly Move[],
  current: ReadonlyMap<string, number[]>,
  rate: number,
): Promise<string | null> {
  const leaders = new Map<string, Set<string>>();
  const followers = new Map<string, Set<string>>();
  const brokers = new Set<number>();
  for (const m of moves) {
    const sources = current.get(name(m)) ?? [];
    const l = leaders.get(m.topic) ?? new Set<string>();
    const f = followers.get(m.topic) ?? new Set<string>();
    for (const b of sources) l.add(`${m.partition}:${b}`);
    for (const b of m.replicas) if (!sources.includes(b)) f.add(`${m.partition}:${b}`);
    leaders.set(m.topic, l);
    followers.set(m.topic, f);
    for (const b of [...sources, ...m.replicas]) brokers.add(b);
  }
  const list = (s: Set<string>) => [...s].sort().join(',');
  const results = await admin.incrementalAlterConfigs([
    ...[...leaders.keys()].map((topic) => ({
      type: 'topic' as const,
      name: topic,
      ops: [
        {
          name: 'leader.replication.throttled.replicas',
          op: 'set' as const,
          value: list(leaders.get(topic)!),
        },
        {
          name: 'follower.replication.throttled.replicas',
          op: 'set' as const,
          value: list(followers.get(topic)!),
        },
      ],
    })),
    ...[...brokers]
      .sort((a, b) => a - b)
      .map((id) => ({
        type: 'broker' as const,
        name: String(id),
        ops: [
          { name: 'leader.replication.throttled.rate', op: 'set' as const, value: String(rate) },
          { name: 'follower.replication.throttled.rate', op: 'set' as const, value: String(rate) },
        ],
      })),
  ]);
  const failed = results.find((r) => r.error !== null);
  return failed === undefined ? null : `${failed.type} ${failed.name}: ${failed.error!.message}`;
}

const BROKER_THROTTLES = [
  'leader.replication.throttled.rate',
  'follower.replication.throttled.rate',
  'replica.alter.log.dirs.io.max.bytes.per.second',
];
const TOPIC_THROTTLES = ['leader.replication.throttled.replicas', 'follower.replication.throttled.replicas'];

/** Kafka's clearAllThrottles: the rates on every broker (of the cluster and the file), the lists on its topics. */
export async function clearThrottles(admin: Admin, moves: readonly Move[]): Promise<void> {
  const brokers = new Set((await admin.describeCluster()).brokers.map((b) => b.nodeId));
  for (const m of moves) for (const b of m.replicas) brokers.add(b);
  out(`Clearing broker-level throttles on broker${brokers.size === 1 ? '' : 's'} ${[...brokers].join(',')}`);
  await admin.incrementalAlterConfigs(
    [...brokers].map((id) => ({
      type: 'broker' as const,
      name: String(id),
      ops: BROKER_THROTTLES.map((key) => ({ name: key, op: 'delete' as const })),
    })),
  );
  const topics = [...new Set(moves.map((m) => m.topic))];
  out(`Clearing topic-level throttles on topic${topics.length === 1 ? '' : 's'} ${topics.join(',')}`);
  await admin.incrementalAlterConfigs(
    topics.map((topic) => ({
      type: 'topic' as const,
      name: topic,
      ops: TOPIC_THROTTLES.map((key) => ({ name: key, op: 'delete' as const })),
    })),
  );
}

async function verify(admin: Admin, moves: readonly Move[], preserveThrottles = false): Promise<number> {
  // Each stage is a round trip (one per broker for log directories): a terminal sees which one it waits for.
  const progress = new Progress();
  progress.update(`verifying ${moves.length} partitions: listing the reassignments in progress`, true);
  const ongoing = new Set((await admin.listPartitionReassignments()).map(name));
  // Only the partitions that are not moving any more need their replicas read (from any broker's metadata).
  const settled = moves.filter((m) => !ongoing.has(name(m)));
  progress.update(`verifying ${moves.length} partitions: reading the replicas of ${settled.length}`, true);
  const current = settled.length === 0 ? new Map<string, number[]>() : await currentReplicas(admin, settled);
  progress.clear();
  out('Status of partition reassignment:');
  for (const m of [...moves].sort(byTopicPartition)) {
    const replicas = current.get(name(m))!;
    if (ongoing.has(name(m))) {
      out(`Reassignment of partition ${name(m)} is still in progress.`);
    } else if (replicas.join(',') === m.replicas.join(',')) {
      out(`Reassignment of partition ${name(m)} is completed.`);
    } else {
      out(
        `There is no active reassignment of partition ${name(m)}, but replica set is ${replicas.join(',')} rather than ${m.replicas.join(',')}.`,
      );
    }
  }
  const dirMoves = replicaDirs(moves);
  const dirsDone = dirMoves.length === 0 || (await verifyDirMoves(admin, dirMoves, progress));
  // Done moving: the throttles set with --execute --throttle come off (Kafka clears them whether set or not).
  if (!preserveThrottles && dirsDone && moves.every((m) => !ongoing.has(name(m)))) {
    await clearThrottles(admin, moves);
  }
  return 0;
}

async function list(admin: Admin): Promise<number> {
  const ongoing = (await admin.listPartitionReassignments()).sort(byTopicPartition);
  if (ongoing.length === 0) {
    out('No partition reassignments found.');
    return 0;
  }
  out('Current partition reassignments:');
  for (const r of ongoing) {
    const adding = r.addingReplicas.length === 0 ? '' : ` adding: ${r.addingReplicas.join(',')}.`;
    const removing = r.removingReplicas.length === 0 ? '' : ` removing: ${r.removingReplicas.join(',')}.`;
    out(`${name(r)}: replicas: ${r.replicas.join(',')}.${adding}${removing}`);
  }
  return 0;
}

async function cancel(admin: Admin, moves: readonly Move[]): Promise<number> {
  const ongoing = new Set((await admin.listPartitionReassignments()).map(name));
  const active = moves.filter((m) => ongoing.has(name(m)));
  if (active.length === 0) {
    out('None of the specified partition moves are active.');
    return 0;
  }
  const results = await admin.alterPartitionReassignments(
    active.map((m) => ({ topic: m.topic, partition: m.partition, replicas: null })),
  );
  return reportResults(results, 'cancel', active.length);
}
