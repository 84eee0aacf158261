// `npm run bench -- security-tls`: what TLS and SASL cost. One broker with PLAINTEXT, SSL, SASL_PLAINTEXT and
// SASL_SSL listeners; Brook's client produces 1 KiB records (acks=1) and fetches them back through each of
// PLAINTEXT, SSL and SASL_SSL in turn, the order rotated each repetition so that all see the same machine; then
// authentications per second (a new connection, ApiVersions, SaslHandshake, SaslAuthenticate, one after another)
// with PLAIN over SASL_PLAINTEXT and SASL_SSL and SCRAM-SHA-256 (4096 iterations) over SASL_SSL. Figures are
// medians of the repetitions; the ratios are to PLAINTEXT (the goal: TLS keeps at least 70 % of
// PLAINTEXT's produce and fetch throughput at 1 KiB records).
//
// Options: --quick (2 s windows, 3 repetitions), --seconds N (window, default 5), --repetitions N (default 3).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
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

const TOPIC = 'bench-tls';
const PARTITIONS = 4;
const RECORD_BYTES = 1024;
/** Sends in flight at once: enough to keep batches full without unbounded memory. */
const OUTSTANDING = 4096;
const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_bench="bench-secret";';

interface Options {
  seconds: number;
  repetitions: number;
}

function parse(args: string[]): Options {
  const options: Options = { seconds: 5, repetitions: 3 };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--quick') options.seconds = 2;
    else if (arg === '--seconds') options.seconds = Number(args[++i]);
    else if (arg === '--repetitions') options.repetitions = Number(args[++i]);
    else if (arg === '--help') {
      console.log('usage: npm run bench -- security-tls [--quick] [--seconds N] [--repetitions N]');
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

async function produceWindow(client: ClientOptions, seconds: number): Promise<number> {
  const producer = new Producer({ ...client, acks: 1, lingerMs: 5, batchSize: 256 * 1024 });
  await producer.connect();
  const value = Buffer.alloc(RECORD_BYTES, 7);
  let acked = 0;
  const inFlight = new Set<Promise<unknown>>();
  const end = performance.now() + seconds * 1000;
  let started = performance.now();
  // A short warm-up, not counted.
  for (let i = 0; i < 2000; i++) inFlight.add(producer.send({ topic: TOPIC, value }));
  await Promise.all(inFlight);
  inFlight.clear();
  started = performance.now();
  while (performance.now() < end) {
    const sent = producer.send({ topic: TOPIC, value }).then(() => {
      acked++;
      inFlight.delete(sent);
    });
    inFlight.add(sent);
    if (inFlight.size >= OUTSTANDING) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  await producer.close();
  return acked / elapsed;
}

async function fetchWindow(client: ClientOptions, seconds: number): Promise<number> {
  const consumer = new Consumer({ ...client, autoOffsetReset: 'earliest', maxPollRecords: 10_000 });
  consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition })));
  await consumer.poll(1000); // warm-up: connections and first fetches
  let records = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  while (performance.now() < end) records += (await consumer.poll(200)).length;
  const elapsed = (performance.now() - started) / 1000;
  await consumer.close();
  return records / elapsed;
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

export async function run(args: string[]): Promise<void> {
  const options = parse(args);
  const dir = mkdtempSync(join(tmpdir(), 'brook-bench-tls-'));
  try {
    const certs = writeDevCertificates({ dir: join(dir, 'certs') });
    const [plain, ssl, saslPlain, saslSsl] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const broker = await startBroker({
      dataDir: join(dir, 'data'),
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
      ];
      const produced = new Map<string, number[]>(listeners.map((l) => [l.name, []]));
      const fetched = new Map<string, number[]>(listeners.map((l) => [l.name, []]));
      for (let rep = 0; rep < options.repetitions; rep++) {
        const order = listeners.map((_, i) => listeners[(i + rep) % listeners.length]!);
        for (const l of order) produced.get(l.name)!.push(await produceWindow(l.client, options.seconds));
        for (const l of order) fetched.get(l.name)!.push(await fetchWindow(l.client, options.seconds));
      }
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
      const base = { produce: median(produced.get('PLAINTEXT')!), fetch: median(fetched.get('PLAINTEXT')!) };
      console.log(
        `1 KiB records, acks=1, ${options.seconds} s windows, ${options.repetitions} repetitions (medians)`,
      );
      console.log('listener    produce rec/s  vs PLAINTEXT   fetch rec/s  vs PLAINTEXT');
      for (const l of listeners) {
        const p = median(produced.get(l.name)!);
        const f = median(fetched.get(l.name)!);
        console.log(
          `${l.name.padEnd(10)} ${p.toFixed(0).padStart(14)} ${(p / base.produce).toFixed(2).padStart(12)} ${f
            .toFixed(0)
            .padStart(13)} ${(f / base.fetch).toFixed(2).padStart(13)}`,
        );
      }
      console.log('authentications per second (sequential, one client):');
      for (const [what, rate] of auths) console.log(`  ${what.padEnd(36)} ${rate.toFixed(0)}`);
    } finally {
      await broker.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
