// `brook rebalance`: a small Cruise-Control-like rebalancer. It reads the cluster (brokers and racks, every
// partition's replicas, partition sizes from DescribeLogDirs), asks the planner (rebalance-plan.ts) for a
// reassignment that evens out replicas, bytes and preferred leaders per broker within --max-move-bytes, then for
// brokers with several log directories moves between them that even out their bytes (rebalance-disks.ts), and
// prints both. Nothing moves without --execute (--dry-run is the default); with it the moves go through
// AlterPartitionReassignments with Kafka's throttle configs (--throttle), the tool waits until they are done, takes
// the throttles off and runs a preferred leader election so that leadership follows the new replica order.
//
// --add-broker N plans with N (registered, still empty) as a target: it gets its fair share. --remove-broker N
// drains N: every replica on it moves elsewhere first, so the broker can then be stopped without losing
// redundancy. Both may be given more than once or as comma-separated lists.

import { Admin } from '../client/admin.js';
import { type ParsedArgs, UsageError } from './args.js';
import { clientOptions, err, newClient, out, runTool, type Tool } from './client-tool.js';
import { clearThrottles, setThrottles } from './reassign-partitions.js';
import { type DiskModel, type DiskPlan, planDiskBalance } from './rebalance-disks.js';
import { type BrokerLoad, type PartitionModel, planRebalance, type RebalancePlan } from './rebalance-plan.js';

const tool: Tool = {
  name: 'rebalance',
  summary:
    'Propose (and with --execute apply) a reassignment evening out replicas, bytes and leaders per broker and bytes per log directory.',
  specs: {
    'dry-run': { help: 'Print the plan only (the default).' },
    execute: {
      help: 'Apply the plan: reassign, wait until done, remove the throttles, elect preferred leaders.',
    },
    throttle: {
      value: true,
      help: 'With --execute, the replication throttle in B/s for the brokers and replicas moving data.',
    },
    'max-move-bytes': {
      value: true,
      help: 'Copy at most this many bytes in this step (default: no limit); run again for the next step.',
    },
    'bytes-tolerance': {
      value: true,
      help: 'Bytes per broker may differ by this share of the mean (default 0.1).',
    },
    'add-broker': { value: true, help: 'A new broker to give its share of the load (repeatable, or a,b).' },
    'remove-broker': { value: true, help: 'A broker to drain before removing it (repeatable, or a,b).' },
    topic: { value: true, help: 'Only these topics (repeatable); default every topic.' },
    'timeout-ms': { value: true, help: 'With --execute, how long to wait for the moves (default 600000).' },
  },
  run,
};

export function runRebalance(args: string[]): Promise<number> {
  return runTool(tool, args);
}

function brokerList(args: ParsedArgs, name: string): number[] {
  return args
    .all(name)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v.length > 0)
    .map((v) => {
      const id = Number(v);
      if (!Number.isInteger(id) || id < 0) throw new UsageError(`--${name} takes broker ids, not '${v}'`);
      return id;
    });
}

function positiveNumber(args: ParsedArgs, name: string): number | undefined {
  const text = args.get(name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0)
    throw new UsageError(`--${name} must be a number >= 0, not '${text}'`);
  return value;
}

async function run(args: ParsedArgs): Promise<number> {
  if (args.has('execute') && args.has('dry-run'))
    throw new UsageError('--execute and --dry-run exclude each other');
  const execute = args.has('execute');
  const throttle = positiveNumber(args, 'throttle');
  if (throttle !== undefined && !execute) throw new UsageError('--throttle needs --execute');
  const maxMoveBytes = positiveNumber(args, 'max-move-bytes') ?? Number.POSITIVE_INFINITY;
  const bytesTolerance = positiveNumber(args, 'bytes-tolerance');
  const timeoutMs = positiveNumber(args, 'timeout-ms') ?? 600_000;
  const adding = brokerList(args, 'add-broker');
  const removing = brokerList(args, 'remove-broker');
  const both = adding.filter((b) => removing.includes(b));
  if (both.length > 0) throw new UsageError(`broker ${both[0]} cannot be both added and removed`);

  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    const cluster = await admin.describeCluster();
    const known = new Set(cluster.brokers.map((b) => b.nodeId));
    for (const b of [...adding, ...removing]) {
      if (!known.has(b)) {
        err(
          `Error: broker ${b} is not registered in the cluster (live brokers: ${[...known].sort((x, y) => x - y).join(',')})`,
        );
        return 1;
      }
    }
    const partitions = await readPartitions(admin, args.all('topic'));
    const brokers = cluster.brokers.map((b) => ({ id: b.nodeId, rack: b.rack }));
    const plan = planRebalance(brokers, partitions, {
      maxMoveBytes,
      removeBrokers: removing,
      ...(bytesTolerance === undefined ? {} : { bytesTolerance }),
    });
    for (const b of adding) {
      const load = plan.before.find((l) => l.id === b);
      if (load !== undefined && load.replicas > 0)
        out(`Note: broker ${b} already holds ${load.replicas} replicas.`);
    }
    printPlan(plan, brokers);
    // Within each broker, between its log directories, with what the byte limit leaves; partitions the plan
    // moves between brokers wait for the next run.
    const diskPlan = planDiskBalance(await readDisks(admin, partitions), {
      maxMoveBytes: maxMoveBytes - plan.movedBytes,
      tolerance: bytesTolerance ?? 0.1,
      skip: new Set(plan.moves.map((m) => `${m.topic}-${m.partition}`)),
    });
    printDiskPlan(diskPlan);
    if (!execute) {
      out('This was a dry run: nothing moved. Run with --execute to apply the plan.');
      return 0;
    }
    const code = await executePlan(admin, plan, throttle, timeoutMs);
    if (code !== 0) return code;
    return await executeDiskPlan(admin, diskPlan, timeoutMs);
  } finally {
    await admin.close();
  }
}

async function readPartitions(admin: Admin, topics: readonly string[]): Promise<PartitionModel[]> {
  const described = await admin.describeTopics(topics.length === 0 ? undefined : [...topics]);
  const sizes = new Map<string, number>();
  for (const dir of await admin.describeLogDirs()) {
    for (const p of dir.partitions) {
      if (p.isFuture) continue;
      const key = `${p.topic}-${p.partition}`;
      sizes.set(key, Math.max(sizes.get(key) ?? 0, p.size));
    }
  }
  const out: PartitionModel[] = [];
  for (const t of described) {
    if (t.partitions.length === 0) throw new UsageError(`topic ${t.topic} does not exist`);
    for (const p of t.partitions) {
      out.push({
        topic: t.topic,
        partition: p.partition,
        replicas: p.replicas,
        sizeBytes: sizes.get(`${t.topic}-${p.partition}`) ?? 0,
      });
    }
  }
  return out;
}

/** The replicas of the chosen partitions in each online log directory of each broker. */
async function readDisks(admin: Admin, partitions: readonly PartitionModel[]): Promise<DiskModel[]> {
  const chosen = new Set(partitions.map((p) => `${p.topic}-${p.partition}`));
  return (await admin.describeLogDirs())
    .filter((d) => d.error === null)
    .map((d) => ({
      broker: d.broker,
      logDir: d.logDir,
      replicas: d.partitions
        .filter((p) => !p.isFuture && chosen.has(`${p.topic}-${p.partition}`))
        .map((p) => ({ topic: p.topic, partition: p.partition, sizeBytes: p.size })),
    }));
}

function printDiskPlan(plan: DiskPlan): void {
  const multi = new Set(
    plan.before
      .filter((d, _, all) => all.filter((x) => x.broker === d.broker).length > 1)
      .map((d) => d.broker),
  );
  if (multi.size === 0) return;
  out('Log directories (bytes before -> after):');
  plan.before.forEach((d, i) => {
    if (multi.has(d.broker)) out(`  broker ${d.broker} ${d.logDir}: ${d.bytes} -> ${plan.after[i]!.bytes}`);
  });
  out(
    `Proposed moves between log directories: ${plan.moves.length} replicas, ${plan.movedBytes} bytes to copy`,
  );
  for (const m of plan.moves)
    out(`  ${m.topic}-${m.partition} on broker ${m.broker}: ${m.fromDir} -> ${m.toDir} (${m.bytes} bytes)`);
  if (!plan.complete) out('The log directory moves stop at --max-move-bytes; run again for the next step.');
}

/** Moves replicas between log directories (AlterReplicaLogDirs) and waits until each is in its new one. */
async function executeDiskPlan(admin: Admin, plan: DiskPlan, timeoutMs: number): Promise<number> {
  if (plan.moves.length === 0) return 0;
  const results = await admin.alterReplicaLogDirs(
    plan.moves.map((m) => ({ topic: m.topic, partition: m.partition, broker: m.broker, logDir: m.toDir })),
  );
  const refused = results.filter((r) => r.error !== null);
  for (const r of refused)
    err(`Error moving ${r.topic}-${r.partition} on broker ${r.broker} to ${r.logDir}: ${r.error!.message}`);
  const started = plan.moves.filter(
    (m) => !refused.some((r) => r.topic === m.topic && r.partition === m.partition && r.broker === m.broker),
  );
  out(`Started ${started.length} moves between log directories; waiting for them to finish.`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dirs = await admin.describeLogDirs([...new Set(started.map((m) => m.broker))]);
    const left = started.filter(
      (m) =>
        !dirs.some(
          (d) =>
            d.broker === m.broker &&
            d.logDir === m.toDir &&
            d.partitions.some((p) => p.topic === m.topic && p.partition === m.partition && !p.isFuture),
        ) ||
        dirs.some(
          (d) =>
            d.broker === m.broker &&
            d.partitions.some((p) => p.topic === m.topic && p.partition === m.partition && p.isFuture),
        ),
    );
    if (left.length === 0) break;
    if (Date.now() > deadline) {
      err(`Error: ${left.length} moves between log directories still in progress after ${timeoutMs} ms.`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  out('All moves between log directories done.');
  return refused.length === 0 ? 0 : 1;
}

function printLoads(title: string, loads: readonly BrokerLoad[], racks: Map<number, string | null>): void {
  out(title);
  out('  broker  rack        replicas  leaders  bytes');
  for (const l of loads) {
    const rack = (racks.get(l.id) ?? '-').padEnd(10);
    out(
      `  ${String(l.id).padStart(6)}  ${rack}  ${String(l.replicas).padStart(8)}  ${String(l.leaders).padStart(7)}  ${l.bytes}`,
    );
  }
}

function printPlan(plan: RebalancePlan, brokers: readonly { id: number; rack: string | null }[]): void {
  const racks = new Map(brokers.map((b) => [b.id, b.rack]));
  printLoads('Current load (leaders: preferred leaders):', plan.before, racks);
  out(`Proposed moves: ${plan.moves.length} partitions, ${plan.movedBytes} bytes to copy`);
  for (const m of plan.moves) {
    out(`  ${m.topic}-${m.partition}: [${m.from.join(',')}] -> [${m.to.join(',')}] (${m.movedBytes} bytes)`);
  }
  printLoads('Load after the moves:', plan.after, racks);
  out(
    plan.complete
      ? 'The plan reaches the balance the racks allow.'
      : 'The plan stops at --max-move-bytes; run again afterwards for the next step.',
  );
}

async function executePlan(
  admin: Admin,
  plan: RebalancePlan,
  throttle: number | undefined,
  timeoutMs: number,
): Promise<number> {
  if (plan.moves.length === 0) {
    out('Nothing to move between brokers.');
    return 0;
  }
  const ongoing = await admin.listPartitionReassignments();
  if (ongoing.length > 0) {
    err(`Error: ${ongoing.length} partition reassignments are in progress; try again once they are done.`);
    return 1;
  }
  const moves = plan.moves.map((m) => ({ topic: m.topic, partition: m.partition, replicas: [...m.to] }));
  if (throttle !== undefined) {
    const current = new Map(plan.moves.map((m) => [`${m.topic}-${m.partition}`, [...m.from]]));
    const failed = await setThrottles(admin, moves, current, throttle);
    if (failed !== null) {
      err(`Error setting the replication throttle: ${failed}`);
      return 1;
    }
    out(`The inter-broker throttle limit was set to ${throttle} B/s`);
  }
  const results = await admin.alterPartitionReassignments(moves);
  const refused = results.filter((r) => r.error !== null);
  for (const r of refused) err(`Error reassigning ${r.topic}-${r.partition}: ${r.error!.message}`);
  out(`Started ${results.length - refused.length} partition reassignments; waiting for them to finish.`);
  const deadline = Date.now() + timeoutMs;
  const mine = new Set(moves.map((m) => `${m.topic}-${m.partition}`));
  for (;;) {
    const left = (await admin.listPartitionReassignments()).filter((r) =>
      mine.has(`${r.topic}-${r.partition}`),
    );
    if (left.length === 0) break;
    if (Date.now() > deadline) {
      err(
        `Error: ${left.length} reassignments still in progress after ${timeoutMs} ms; throttles left in place.`,
      );
      return 1;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  if (throttle !== undefined) await clearThrottles(admin, moves);
  const elected = await admin.electLeaders(
    'preferred',
    moves.map((m) => ({ topic: m.topic, partition: m.partition })),
  );
  const moved = elected.filter((r) => r.error === null).length;
  out(`All moves done; preferred leader election moved the leadership of ${moved} partitions.`);
  return refused.length === 0 ? 0 : 1;
}
