// `npm run bench -- mirror-trace [--records N] [--plain]`: one MirrorMaker copy (as `mirror` runs it) traced stage
// by stage, to see where the copy waits rather than how fast it is. It wraps, in this process only:
//   task poll      MirrorSourceTask.poll (the source consumer's poll and the records' conversion)
//   window wait    WorkerSourceTask.produce (returns once the batch is handed over; waits while the
//                  unacknowledged records fill buffer.memory)
//   commit         WorkerSourceTask.commitOffsets
//   fetch/produce  the Fetch requests of the task's consumer and the Produce requests of its producer: count,
//                  bytes, latency, and the time with at least one in flight
// and reports the process's event-loop utilisation, CPU time and garbage collections over the copy (young-generation
// collections per record follow what the copy allocates, whatever the machine's load). `--plain` traces the plain
// consume-and-produce loop of `mirror` the same way instead. Counts from the first record read to the N-th
// acknowledged, as `mirror`.

import { PerformanceObserver, performance } from 'node:perf_hooks';
import { Cluster } from '../../src/client/cluster.js';
import { Admin } from '../../src/client/index.js';
import { mirrorMetrics } from '../../src/connect/mirror/metrics.js';
import { MirrorMaker } from '../../src/connect/mirror/mirror-maker.js';
import { MirrorSourceTask } from '../../src/connect/mirror/source-connector.js';
import { WorkerSourceTask } from '../../src/connect/runtime/worker-source-task.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startBroker } from '../../test/helpers/broker-process.js';
import { numberOption } from '../harness/options.js';
import { mirrorProperties, PARTITIONS, preload } from './mirror.js';
import { plainCopy } from './plain-copy.js';

interface Stage {
  ms: number;
  calls: number;
  items: number;
}
interface Request {
  start: number;
  end: number;
  bytes: number;
}

const stages = new Map<string, Stage>();
const requests = new Map<string, Request[]>();
let tracing = false;
/** Garbage collections by kind (scavenge, mark-compact, ...), with when they started; the copy's are counted. */
const collections: { kind: string; start: number; ms: number }[] = [];
let collectionsFrom = 0;
const GC_KINDS: Record<number, string> = {
  1: 'scavenge',
  2: 'mark-compact',
  4: 'incremental marking',
  8: 'weak callbacks',
  16: 'minor mark-compact',
};
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const detail = (e as { detail?: { kind?: number } }).detail;
    const kind = GC_KINDS[detail?.kind ?? 0] ?? 'other';
    collections.push({ kind, start: e.startTime, ms: e.duration });
  }
});

function count(name: string, ms: number, items: number): void {
  let s = stages.get(name);
  if (s === undefined) stages.set(name, (s = { ms: 0, calls: 0, items: 0 }));
  s.ms += ms;
  s.calls++;
  s.items += items;
}

type AnyFn = (...args: unknown[]) => unknown;

/** Wraps an async method of a prototype: time from call to settlement, and what `items` counts. */
function wrap(
  proto: object,
  method: string,
  name: string,
  items: (result: unknown, args: unknown[]) => number,
) {
  const target = proto as Record<string, AnyFn>;
  const original = target[method]!;
  target[method] = function (this: unknown, ...args: unknown[]) {
    if (!tracing) return original.apply(this, args);
    const t = performance.now();
    const r = original.apply(this, args);
    const done = (v: unknown) => {
      count(name, performance.now() - t, items(v, args));
      return v;
    };
    return r instanceof Promise ? r.then(done) : done(r);
  };
}

function recordBytes(parts: ReadonlyArray<{ records?: { length: number } | null }>): number {
  return parts.reduce((n, p) => n + (p.records?.length ?? 0), 0);
}

/** Wraps Cluster.send for Fetch and Produce requests of clients whose client.id `who` names. */
function traceRequests(who: (clientId: string) => string | null): void {
  const proto = Cluster.prototype as unknown as Record<string, AnyFn>;
  const original = proto.send!;
  proto.send = function (this: Cluster, node: unknown, api: unknown, body: unknown, options: unknown) {
    const name = who(this.options.clientId ?? '');
    if (!tracing || name === null || (api !== ApiKey.FETCH && api !== ApiKey.PRODUCE)) {
      return original.call(this, node, api, body, options);
    }
    const start = performance.now();
    const kind = `${name} ${api === ApiKey.FETCH ? 'fetch' : 'produce'}`;
    const sent =
      api === ApiKey.PRODUCE
        ? (body as { topicData: { partitionData: { records?: Buffer | null }[] }[] }).topicData.reduce(
            (n, t) => n + recordBytes(t.partitionData),
            0,
          )
        : 0;
    return (original.call(this, node, api, body, options) as Promise<unknown>).then((res) => {
      const bytes =
        api === ApiKey.FETCH
          ? (res as { responses: { partitions: { records?: Buffer | null }[] }[] }).responses.reduce(
              (n, t) => n + recordBytes(t.partitions),
              0,
            )
          : sent;
      let list = requests.get(kind);
      if (list === undefined) requests.set(kind, (list = []));
      list.push({ start, end: performance.now(), bytes });
      return res;
    });
  };
}

function report(label: string, records: number, ms: number, elu: number, cpuMs: number): void {
  const out = process.stdout;
  out.write(
    `${label}: ${records} records in ${ms.toFixed(0)} ms = ${Math.round((records * 1000) / ms)} rec/s; ` +
      `event loop busy ${(elu * 100).toFixed(0)} %, CPU ${cpuMs.toFixed(0)} ms (${((cpuMs * 1000) / records).toFixed(1)} us/record)\n`,
  );
  for (const [kind, list] of [...requests].sort()) {
    const lat = list.map((r) => r.end - r.start).sort((a, b) => a - b);
    const bytes = list.reduce((n, r) => n + r.bytes, 0);
    let busy = 0;
    let until = -Infinity;
    for (const r of [...list].sort((a, b) => a.start - b.start)) {
      const from = Math.max(r.start, until);
      if (r.end > from) busy += r.end - from;
      until = Math.max(until, r.end);
    }
    out.write(
      `  ${kind.padEnd(14)} ${String(list.length).padStart(5)} requests, ${(bytes / 1e6).toFixed(1)} MB, ` +
        `${(bytes / list.length / 1e3).toFixed(0)} KB each, latency p50 ${lat[lat.length >> 1]!.toFixed(1)} ms ` +
        `max ${lat.at(-1)!.toFixed(1)} ms, one in flight ${busy.toFixed(0)} ms\n`,
    );
  }
  const byKind = new Map<string, { count: number; ms: number }>();
  for (const c of collections) {
    if (c.start < collectionsFrom) continue;
    const k = byKind.get(c.kind) ?? { count: 0, ms: 0 };
    k.count++;
    k.ms += c.ms;
    byKind.set(c.kind, k);
  }
  for (const [kind, c] of [...byKind].sort()) {
    out.write(
      `  gc ${kind.padEnd(20)} ${String(c.count).padStart(5)} (${((c.count * 1e6) / records).toFixed(0)} per million records), ` +
        `${c.ms.toFixed(0)} ms\n`,
    );
  }
  for (const [name, s] of [...stages].sort()) {
    out.write(
      `  ${name.padEnd(14)} ${String(s.calls).padStart(5)} calls, ${s.ms.toFixed(0).padStart(6)} ms in all, ` +
        `${(s.ms / s.calls).toFixed(2)} ms each, ${(s.items / s.calls).toFixed(0)} records each\n`,
    );
  }
}

/** Starts the measurement at the first record read: stage and request figures before it are start-up. */
function startMeasuring(): {
  elu: ReturnType<typeof performance.eventLoopUtilization>;
  cpu: NodeJS.CpuUsage;
} {
  stages.clear();
  requests.clear();
  collectionsFrom = performance.now();
  return { elu: performance.eventLoopUtilization(), cpu: process.cpuUsage() };
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--help')) {
    process.stdout.write('usage: npm run bench -- mirror-trace [--records N] [--plain]\n');
    return;
  }
  const records = numberOption(args, '--records', 200_000);
  gcObserver.observe({ entryTypes: ['gc'] });
  const plain = args.includes('--plain');
  wrap(MirrorSourceTask.prototype, 'poll', 'task poll', (v) => (v as unknown[] | null)?.length ?? 0);
  wrap(WorkerSourceTask.prototype, 'produce', 'window wait', (_v, a) => (a[0] as unknown[]).length);
  wrap(WorkerSourceTask.prototype, 'commitOffsets', 'commit', () => 0);
  traceRequests((id) =>
    id.includes('MirrorSourceTask') || id === 'plain-consumer'
      ? 'source'
      : id.startsWith('connector-producer') || id === 'plain-producer'
        ? 'target'
        : null,
  );
  const [a, b] = await Promise.all([startBroker(), startBroker()]);
  try {
    const topic = 'trace';
    await preload(a.bootstrap, topic, records);
    tracing = true;
    if (plain) {
      const admin = new Admin({ bootstrapServers: b.bootstrap });
      await admin.createTopics([{ topic: 'copy', numPartitions: PARTITIONS, replicationFactor: 1 }]);
      await admin.close();
      let base = startMeasuring();
      const ms = await plainCopy({
        from: a.bootstrap,
        to: b.bootstrap,
        topic,
        partitions: PARTITIONS,
        target: 'copy',
        records,
        clientIds: { consumer: 'plain-consumer', producer: 'plain-producer' },
        onFirstRecords: () => (base = startMeasuring()),
      });
      tracing = false;
      const cpu = process.cpuUsage(base.cpu);
      const elu = performance.eventLoopUtilization(base.elu).utilization;
      report('plain', records, ms, elu, (cpu.user + cpu.system) / 1000);
      return;
    }
    let first: number | null = null;
    let base = startMeasuring();
    // The measurement starts as the task's first poll with records returns (its own figures are left out).
    const traced = MirrorSourceTask.prototype.poll;
    MirrorSourceTask.prototype.poll = async function (this: MirrorSourceTask) {
      const polled = await traced.call(this);
      if (first === null && polled !== null && polled.length > 0) {
        first = performance.now();
        base = startMeasuring();
      }
      return polled;
    };
    const copied = new Promise<number>((resolve, reject) => {
      const deadline = Date.now() + 600_000;
      const timer = setInterval(() => {
        const ms = mirrorMetrics.all().filter((m) => m.topic === `A.${topic}`);
        const acked = ms.reduce((n, m) => n + m.replicationLatencyMs.count, 0);
        if (first !== null && acked >= records) {
          clearInterval(timer);
          resolve(performance.now() - first);
        } else if (Date.now() > deadline) {
          clearInterval(timer);
          reject(new Error(`${acked} of ${records} acknowledged after 10 minutes`));
        }
      }, 1);
    });
    const mm = await MirrorMaker.start(mirrorProperties(a.bootstrap, b.bootstrap, topic), () => {});
    const ms = await copied;
    tracing = false;
    const cpu = process.cpuUsage(base.cpu);
    const elu = performance.eventLoopUtilization(base.elu).utilization;
    report('MirrorMaker', records, ms, elu, (cpu.user + cpu.system) / 1000);
    await mm.stop();
  } finally {
    gcObserver.disconnect();
    await Promise.all([a.stop(), b.stop()]);
  }
}
