// `npm run bench -- security-tls`: what TLS and SASL cost. One broker with PLAINTEXT, SSL, SASL_PLAINTEXT and
// SASL_SSL listeners; Brook's client produces 1 KiB records (acks=1) and fetches them back through each of
// PLAINTEXT, SSL and SASL_SSL in turn, the order rotated each repetition so that all see the same machine; then
// authentications per second (a new connection, ApiVersions, SaslHandshake, SaslAuthenticate, one after another)
// with PLAIN over SASL_PLAINTEXT and SASL_SSL and SCRAM-SHA-256 (4096 iterations) over SASL_SSL. Figures are
// medians of the repetitions; the ratios are to PLAINTEXT (the goal: TLS keeps at least 70 % of
// PLAINTEXT's produce and fetch throughput at 1 KiB records).
//
// Beside records per second, each window's CPU: the broker's (from /proc, every thread) and this process's (the
// client's, process.cpuUsage), as records per CPU-second, the steadier figure on a loaded machine.
//
// Limits measured in the same run (bench/limits): L_net and L_tls, loopback TCP and loopback TLS with no
// protocol. L_tls / L_net is the most any TLS listener can keep of a plain one's throughput on this machine
// when the plain one runs near L_net; each listener's payload rate is also printed as a fraction of its limit
// (R_net for PLAINTEXT, R_tls for the TLS ones).
//
// Options: --quick (2 s windows, 3 repetitions; 1 s limits), --seconds N (window, default 5), --repetitions N (default 3),
// --produce-only (no fetch windows, no authentications), --no-limits, --listeners SSL (those besides PLAINTEXT), --cpu-prof-dir DIR (the broker writes a CPU profile
// there when it stops), --env K=V (in the broker's environment, repeatable).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '../../src/client/admin.js';
import { Connection } from '../../src/client/connection.js';
import { Consumer } from '../../src/client/consumer.js';
import type { ClientOptions } from '../../src/client/options.js';
import { resolveClientOptions } from '../../src/client/options.js';
import { Producer } from '../../src/client/producer.js';
import { assert } from '../../src/common/assert.js';
import { writeDevCertificates } from '../../src/security/dev-certs.js';
import { startBroker } from '../broker/broker-process.js';
import { readProcessCpu } from '../harness/process-usage.js';
import { type LimitSet, limitDurationMs, measureLimits } from '../limits/measure-limits.js';

const TOPIC = 'bench-tls';
const PARTITIONS = 4;
const RECORD_BYTES = 1024;
/** Sends in flight at once: enough to keep batches full without unbounded memory. */
const OUTSTANDING = 4096;
const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_bench="bench-secret";';

interface Options {
  seconds: number;
  repetitions: number;
  produceOnly: boolean;
  limits: boolean;
  /** Limits run for 1 s per repetition instead of 6 s. */
  quickLimits: boolean;
  cpuProfileDir: string | undefined;
  env: Record<string, string>;
  /** The listeners measured (PLAINTEXT always, as the base of the ratios). */
  listeners: string[];
}

/** One window's rate and the CPU both sides spent in it. */
interface Window {
  perSecond: number;
  perBrokerCpuSecond: number;
  perClientCpuSecond: number;
}

function parse(args: string[]): Options {
  const options: Options = {
    seconds: 5,
    repetitions: 3,
    produceOnly: false,
    limits: true,
    quickLimits: false,
    cpuProfileDir: undefined,
    env: {},
    listeners: ['PLAINTEXT', 'SSL', 'SASL_SSL'],
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--quick') {
      options.seconds = 2;
      options.quickLimits = true;
    } else if (arg === '--no-limits') options.limits = false;
    else if (arg === '--seconds') options.seconds = Number(args[++i]);
    else if (arg === '--repetitions') options.repetitions = Number(args[++i]);
    else if (arg === '--produce-only') options.produceOnly = true;
    else if (arg === '--listeners') options.listeners = ['PLAINTEXT', ...(args[++i] ?? '').split(',')];
    else if (arg === '--cpu-prof-dir') options.cpuProfileDir = args[++i];
    else if (arg === '--env') {
      const [key, ...value] = (args[++i] ?? '').split('=');
      options.env[key!] = value.join('=');
    } else if (arg === '--help') {
      console.log(
        'usage: npm run bench -- security-tls [--quick] [--seconds N] [--repetitions N] [--produce-only] [--no-limits] [--listeners SSL,SASL_SSL] [--cpu-prof-dir DIR] [--env K=V]',
      );
      process.exit(0);
    } else throw new Error(`unknown option ${arg}`);
  }
  assert(options.repetitions >= 1 && options.seconds > 0, 'bad options');
  return options;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

function brokerCpuSeconds(pid: number): number {
  const cpu = readProcessCpu(pid);
  return cpu === undefined ? 0 : cpu.userSeconds + cpu.systemSeconds;
}

/** Runs `measure` (which returns records and the seconds it counted them over) and takes both sides' CPU. */
async function measured(
  brokerPid: number,
  measure: (mark: () => void) => Promise<{ records: number; seconds: number }>,
): Promise<Window> {
  let broker0 = 0;
  let client0 = process.cpuUsage();
  const mark = (): void => {
    broker0 = brokerCpuSeconds(brokerPid);
    client0 = process.cpuUsage();
  };
  const { records, seconds } = await measure(mark);
  const brokerCpu = brokerCpuSeconds(brokerPid) - broker0;
  const client = process.cpuUsage(client0);
  return {
    perSecond: records / seconds,
    perBrokerCpuSecond: records / brokerCpu,
    perClientCpuSecond: records / ((client.user + client.system) / 1e6),
  };
}

async function produceWindow(
  client: ClientOptions,
  seconds: number,
  mark: () => void,
): Promise<{ records: number; seconds: number }> {
  const producer = new Producer({ ...client, acks: 1, lingerMs: 5, batchSize: 256 * 1024 });
  await producer.connect();
  const value = Buffer.alloc(RECORD_BYTES, 7);
  // A count of sends in flight and one waiter, woken when half have been acknowledged. (A Promise.race over the
  // set of 4096 pending sends, as this loop had, attaches a reaction to every one of them on every send past the
  // limit: it made this process the bottleneck, more so on the slower listeners, and the ratios with it.)
  let acked = 0;
  let inFlight = 0;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const settled = (): void => {
    inFlight--;
    if (wake !== null && (inFlight <= OUTSTANDING / 2 || inFlight === 0)) {
      const w = wake;
      wake = null;
      w();
    }
  };
  const onAck = (): void => {
    acked++;
    settled();
  };
  const onError = (err: unknown): void => {
    failure ??= err;
    settled();
  };
  const drain = async (below: number): Promise<void> => {
    while (inFlight > below) await new Promise<void>((resolve) => (wake = resolve));
  };
  // A short warm-up, not counted.
  for (let i = 0; i < 2000; i++) {
    inFlight++;
    producer.send({ topic: TOPIC, value }).then(settled, onError);
  }
  await drain(0);
  mark();
  const started = performance.now();
  const end = started + seconds * 1000;
  while (performance.now() < end && failure === null) {
    inFlight++;
    producer.send({ topic: TOPIC, value }).then(onAck, onError);
    if (inFlight >= OUTSTANDING) await drain(OUTSTANDING / 2);
  }
  await drain(0);
  const elapsed = (performance.now() - started) / 1000;
  await producer.close();
  if (failure !== null) throw failure;
  return { records: acked, seconds: elapsed };
}

async function fetchWindow(
  client: ClientOptions,
  seconds: number,
  mark: () => void,
): Promise<{ records: number; seconds: number }> {
  const consumer = new Consumer({ ...client, autoOffsetReset: 'earliest', maxPollRecords: 10_000 });
  consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition })));
  await consumer.poll(1000); // warm-up: connections and first fetches
  let records = 0;
  mark();
  const started = performance.now();
  const end = started + seconds * 1000;
  while (performance.now() < end) records += (await consumer.poll(200)).length;
  const elapsed = (performance.now() - started) / 1000;
  await consumer.close();
  return { records, seconds: elapsed };
}

async function authenticationsPerSecond(
  client: ClientOptions,
  port: number,
  seconds: number,
): Promise<number> {
  const options = resolveClientOptions(client);
  let count = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  while (performance.now() < end) {
    const connection = await Connection.connect('127.0.0.1', port, options);
    connection.close();
    count++;
  }
  return count / ((performance.now() - started) / 1000);
}

/** The table: each listener's medians and their ratios to PLAINTEXT's, for rate and for both sides' CPU. */
function report(
  listeners: readonly { name: string }[],
  produced: Map<string, Window[]>,
  fetched: Map<string, Window[]>,
  options: Options,
): void {
  console.log(
    `1 KiB records, acks=1, ${options.seconds} s windows, ${options.repetitions} repetitions (medians; ratios to PLAINTEXT)`,
  );
  const columns = ['perSecond', 'perBrokerCpuSecond', 'perClientCpuSecond'] as const;
  for (const [what, windows] of [
    ['produce', produced],
    ['fetch', fetched],
  ] as const) {
    if (windows.get('PLAINTEXT')!.length === 0) continue;
    const base = columns.map((c) => median(windows.get('PLAINTEXT')!.map((w) => w[c])));
    console.log(
      `${what.padEnd(10)} ${'rec/s'.padStart(18)} ${'rec/broker CPU-s'.padStart(22)} ${'rec/client CPU-s'.padStart(22)}`,
    );
    for (const l of listeners) {
      const cells = columns.map((c, i) => {
        const m = median(windows.get(l.name)!.map((w) => w[c]));
        return `${m.toFixed(0)} (${(m / base[i]!).toFixed(2)})`.padStart(22);
      });
      console.log(`${l.name.padEnd(10)} ${cells.join('')}`);
    }
  }
}

/**
 * Each listener's median payload rate (1 KiB values, record framing left out) as a fraction of the limit of its
 * transport: L_net for PLAINTEXT, L_tls for the others. Only the limits' medians are used: a limit is a
 * ceiling, the windows' medians the figure read against it.
 */
function reportLimits(
  limits: LimitSet,
  listeners: readonly { name: string }[],
  produced: Map<string, Window[]>,
  fetched: Map<string, Window[]>,
): void {
  const net = limits.get('L_net');
  const tls = limits.get('L_tls');
  if (net === undefined || tls === undefined) return;
  const range = (x: { min: number; max: number }) => `${x.min.toFixed(0)}-${x.max.toFixed(0)}`;
  console.log(
    `limits: L_net ${net.summary.median.toFixed(0)} MB/s (${range(net.summary)}), L_tls ${tls.summary.median.toFixed(0)} MB/s (${range(tls.summary)}), L_tls / L_net ${(tls.summary.median / net.summary.median).toFixed(2)}`,
  );
  console.log(
    `${'payload MB/s over the limit'.padEnd(28)} ${'produce'.padStart(16)} ${'fetch'.padStart(16)}`,
  );
  for (const l of listeners) {
    const limit = l.name === 'PLAINTEXT' ? net : tls;
    const cells = [produced, fetched].map((windows) => {
      const w = windows.get(l.name)!;
      if (w.length === 0) return '-'.padStart(16);
      const megabytes = (median(w.map((x) => x.perSecond)) * RECORD_BYTES) / 1e6;
      return `${(megabytes / limit.summary.median).toFixed(2)} of ${limit.name}`.padStart(16);
    });
    console.log(`${l.name.padEnd(28)} ${cells.join(' ')}`);
  }
}

export async function run(args: string[]): Promise<void> {
  const options = parse(args);
  const dir = mkdtempSync(join(tmpdir(), 'brook-bench-tls-'));
  try {
    // Limits first, on an idle machine as far as this run goes (no broker started yet).
    const limits: LimitSet = options.limits
      ? await measureLimits({
          names: ['L_net', 'L_tls'],
          durationMs: options.quickLimits ? limitDurationMs.quick : limitDurationMs.full,
          parentDir: dir,
          log: (message) => console.log(message),
        })
      : new Map();
    const certs = writeDevCertificates({ dir: join(dir, 'certs') });
    const [plain, ssl, saslPlain, saslSsl] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const broker = await startBroker({
      dataDir: join(dir, 'data'),
      env: options.env,
      ...(options.cpuProfileDir !== undefined ? { cpuProfileDir: options.cpuProfileDir } : {}),
      overrides: {
        listeners: `PLAINTEXT://127.0.0.1:${plain},SSL://127.0.0.1:${ssl},SASL_PLAINTEXT://127.0.0.1:${saslPlain},SASL_SSL://127.0.0.1:${saslSsl}`,
        'inter.broker.listener.name': 'PLAINTEXT',
        'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256',
        'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
        'listener.name.sasl_ssl.plain.sasl.jaas.config': JAAS,
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.location': certs.brokerKeystorePem,
      },
    });
    try {
      const tls = { ca: readFileSync(certs.caCert, 'utf8') };
      const plainSasl = { mechanism: 'plain' as const, username: 'bench', password: 'bench-secret' };
      const admin = new Admin({ bootstrapServers: `127.0.0.1:${plain}` });
      await admin.createTopics([{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1 }]);
      await admin.alterUserScramCredentials([
        { user: 'bench', mechanism: 'SCRAM-SHA-256', password: 'bench-scram', iterations: 4096 },
      ]);
      await admin.close();
      const listeners: { name: string; client: ClientOptions }[] = [
        { name: 'PLAINTEXT', client: { bootstrapServers: `127.0.0.1:${plain}` } },
        { name: 'SSL', client: { bootstrapServers: `127.0.0.1:${ssl}`, tls } },
        { name: 'SASL_SSL', client: { bootstrapServers: `127.0.0.1:${saslSsl}`, tls, sasl: plainSasl } },
      ].filter((l) => options.listeners.includes(l.name));
      const produced = new Map<string, Window[]>(listeners.map((l) => [l.name, []]));
      const fetched = new Map<string, Window[]>(listeners.map((l) => [l.name, []]));
      const loads: number[] = [];
      for (let rep = 0; rep < options.repetitions; rep++) {
        const order = listeners.map((_, i) => listeners[(i + rep) % listeners.length]!);
        for (const l of order) {
          const w = await measured(broker.pid, (mark) => produceWindow(l.client, options.seconds, mark));
          produced.get(l.name)!.push(w);
        }
        if (!options.produceOnly) {
          for (const l of order) {
            const w = await measured(broker.pid, (mark) => fetchWindow(l.client, options.seconds, mark));
            fetched.get(l.name)!.push(w);
          }
        }
        loads.push(loadavg()[0]!);
      }
      report(listeners, produced, fetched, options);
      reportLimits(limits, listeners, produced, fetched);
      console.log(
        `1-minute load average after each repetition: ${loads.map((l) => l.toFixed(1)).join(', ')}`,
      );
      if (options.produceOnly) return;
      const auths: [string, number][] = [
        [
          'PLAIN over SASL_PLAINTEXT',
          await authenticationsPerSecond(
            { bootstrapServers: `127.0.0.1:${saslPlain}`, sasl: plainSasl },
            saslPlain,
            options.seconds,
          ),
        ],
        [
          'PLAIN over SASL_SSL',
          await authenticationsPerSecond(
            { bootstrapServers: `127.0.0.1:${saslSsl}`, tls, sasl: plainSasl },
            saslSsl,
            options.seconds,
          ),
        ],
        [
          'SCRAM-SHA-256 (4096) over SASL_SSL',
          await authenticationsPerSecond(
            {
              bootstrapServers: `127.0.0.1:${saslSsl}`,
              tls,
              sasl: { mechanism: 'scram-sha-256', username: 'bench', password: 'bench-scram' },
            },
            saslSsl,
            options.seconds,
          ),
        ],
      ];
      console.log('authentications per second (sequential, one client):');
      for (const [what, rate] of auths) console.log(`  ${what.padEnd(36)} ${rate.toFixed(0)}`);
    } finally {
      await broker.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
