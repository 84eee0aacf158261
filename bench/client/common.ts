// What the client benchmarks share: choosing clients, measuring one turn (rate, CPU of this process per record,
// load average) and summarising turns into a table and result lines. The clients run in this process and the
// broker in its own, so process.cpuUsage() over a turn is the client's cost (plus the benchmark's own loop); a
// client run as a child process (kcat) adds its CPU once it has exited (childrenCpuMicros).

import { readFileSync } from 'node:fs';
import os from 'node:os';
import { startBroker } from '../../test/helpers/broker-process.js';
import { Histogram, type ResultWriter, type Summary, summarize } from '../harness/index.js';
import { startNullBroker, stopNullBroker } from '../limits/null-broker.js';

/**
 * CPU microseconds (user + system) of this process's children that have exited and been reaped: cutime and
 * cstime of /proc/self/stat (fields 16 and 17, clock ticks of 10 ms). The broker is a child too, but it stays up
 * through every turn, so the difference over a turn is the CPU of the child clients that ended in it.
 */
export function childrenCpuMicros(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name, which is in parentheses: field 3 is at index 0, so 16 and 17 at 13 and 14.
  const fields = text
    .slice(text.lastIndexOf(')') + 1)
    .trim()
    .split(/\s+/);
  return (Number(fields[13]) + Number(fields[14])) * CLOCK_TICK_MICROS;
}

/** USER_HZ is 100 on every mainstream Linux. */
const CLOCK_TICK_MICROS = 10_000;

/** One measured turn of one client. */
export interface Turn {
  recordsPerSecond: number;
  /** CPU microseconds of this process (user + system) per record over the turn, plus a child client's. */
  cpuMicrosPerRecord: number;
  /** 1-minute load average right after the turn. */
  load1: number;
  latency?: Histogram;
}

/** Measures `body` as a turn over `records` records; `body` resolves once the last record is acknowledged/seen. */
export async function measureTurn(
  records: number,
  body: () => Promise<Histogram | undefined>,
): Promise<Turn> {
  const cpu0 = process.cpuUsage();
  const children0 = childrenCpuMicros();
  const start = performance.now();
  const latency = await body();
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  const children = childrenCpuMicros() - children0;
  return {
    recordsPerSecond: (records * 1000) / elapsedMs,
    cpuMicrosPerRecord: (cpu.user + cpu.system + children) / records,
    load1: os.loadavg()[0]!,
    latency,
  };
}

/** Parses `--clients a,b` against the known names (all of them by default). */
export function chooseClients<T>(all: [string, T][], list: string | undefined): [string, T][] {
  if (list === undefined) return all;
  const names = list.split(',');
  for (const n of names) {
    if (!all.some(([name]) => name === n)) {
      throw new Error(`unknown client ${n} (known: ${all.map(([name]) => name).join(', ')})`);
    }
  }
  return all.filter(([name]) => names.includes(name));
}

export interface ClientSummary {
  name: string;
  rate: Summary;
  cpu: Summary;
  load: Summary;
  /** All turns' latencies merged (one slow turn can own the merged p99). */
  latency?: ReturnType<Histogram['summary']>;
  /** Each turn's p50 and p99 in microseconds, summarized over turns (median and range). */
  p50?: Summary;
  p99?: Summary;
}

/** Summarises each client's turns and writes them as result lines (figures per client, then latency). */
export function summarizeTurns(
  turns: Map<string, Turn[]>,
  writer: ResultWriter | null,
  details: Record<string, unknown>,
): ClientSummary[] {
  const out: ClientSummary[] = [];
  for (const [name, ts] of turns) {
    if (ts.length === 0) continue;
    const rate = summarize(ts.map((t) => t.recordsPerSecond));
    const cpu = summarize(ts.map((t) => t.cpuMicrosPerRecord));
    const load = summarize(ts.map((t) => t.load1));
    let latency: ClientSummary['latency'];
    let p50: Summary | undefined;
    let p99: Summary | undefined;
    const histograms = ts.flatMap((t) => (t.latency === undefined ? [] : [t.latency]));
    if (histograms.length > 0) {
      const perTurn = histograms.map((h) => h.summary());
      p50 = summarize(perTurn.map((l) => l.p50));
      p99 = summarize(perTurn.map((l) => l.p99));
      const merged = new Histogram('us');
      for (const h of histograms) merged.merge(h);
      latency = merged.summary();
    }
    out.push({ name, rate, cpu, load, latency, p50, p99 });
    if (writer !== null) {
      writer.figure(`${name}-records-per-second`, 'records/s', rate, { client: name, ...details });
      writer.figure(`${name}-cpu-per-record`, 'us', cpu, { client: name, ...details });
      writer.figure(`${name}-load1`, 'load', load, { client: name });
      if (latency !== undefined) writer.latency(`${name}-latency`, latency, { client: name, unit: 'us' });
      if (p50 !== undefined) writer.figure(`${name}-turn-p50`, 'us', p50, { client: name });
      if (p99 !== undefined) writer.figure(`${name}-turn-p99`, 'us', p99, { client: name });
    }
  }
  return out;
}

/**
 * Table rows: rate median (range), ratio to `base`, CPU per record, optionally p50 and p99 (median over turns and
 * range, ms) and the p99 of all turns merged, then the load range.
 */
export function tableRows(summaries: ClientSummary[], base: string, withLatency: boolean): string[][] {
  const baseRate = summaries.find((s) => s.name === base)?.rate.median ?? summaries[0]!.rate.median;
  return summaries.map((s) => {
    const row = [
      s.name,
      `${Math.round(s.rate.median)} (${Math.round(s.rate.min)}-${Math.round(s.rate.max)})`,
      (s.rate.median / baseRate).toFixed(2),
      `${s.cpu.median.toFixed(2)} (${s.cpu.min.toFixed(2)}-${s.cpu.max.toFixed(2)})`,
    ];
    if (withLatency) {
      const ms = (x: Summary | undefined) =>
        x === undefined
          ? '-'
          : `${(x.median / 1000).toFixed(1)} (${(x.min / 1000).toFixed(1)}-${(x.max / 1000).toFixed(1)})`;
      row.push(ms(s.p50), ms(s.p99), s.latency === undefined ? '-' : (s.latency.p99 / 1000).toFixed(1));
    }
    row.push(`${s.load.min.toFixed(1)}-${s.load.max.toFixed(1)}`);
    return row;
  });
}

/** Where a client benchmark's clients connect: a broker it started (and stops), or one it was pointed at. */
export interface BenchTarget {
  bootstrap: string;
  /** What the clients talk to, for the report: `brook`, `null` or `external`. */
  kind: 'brook' | 'null' | 'external';
  stop(): Promise<void>;
}

/**
 * The broker of a client benchmark: `--bootstrap` as given, `--null-broker` a null broker in its clients mode
 * (bench/broker/null-broker-clients.ts: answers without storing to disk or validating, so the clients are the
 * bound; issue 21's "against a null broker"), else a Brook broker process.
 */
export async function startBenchTarget(
  o: { bootstrap: string | undefined; nullBroker: boolean },
  overrides?: Record<string, string | number | boolean>,
): Promise<BenchTarget> {
  if (o.bootstrap !== undefined) return { bootstrap: o.bootstrap, kind: 'external', stop: async () => {} };
  if (o.nullBroker) {
    const { child, port } = await startNullBroker(1, true);
    return { bootstrap: `127.0.0.1:${port}`, kind: 'null', stop: () => stopNullBroker(child) };
  }
  const broker = await startBroker({ overrides });
  return {
    bootstrap: broker.bootstrap,
    kind: 'brook',
    stop: async () => {
      await broker.stop();
    },
  };
}
