// Records golden request fixtures from real clients nobody here wrote: a Brook broker runs behind a recording
// proxy (and advertises the proxy, so clients stay on it), each client does its usual work against it, and the
// request frames it sent are written to test/fixtures/golden/<client>.jsonl, one JSON object per frame
// ({apiKey, apiVersion, frame: base64}). test/protocol/golden.test.ts decodes them.
//
// Run: npx tsc -p tsconfig.json && node dist/tools/capture/record-goldens.js

import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { run, startBroker } from '../../test/helpers/broker-process.js';
import { CaptureProxy } from './capture-proxy.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const OUT = join(ROOT, 'test/fixtures/golden');
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
/** Values long enough to compress well: librdkafka sends a batch uncompressed when compression does not help. */
export const PADDING = '.'.repeat(300);

type Client = (bootstrap: string) => Promise<void>;

const kcat: Client = async (bootstrap) => {
  await must(run('kcat', ['-b', bootstrap, '-L', '-J']));
  for (const codec of CODECS) {
    const lines = Array.from({ length: 3 }, (_, i) => `k${i}:golden-${codec}-${i}${PADDING}`).join('\n');
    await must(
      run(
        'kcat',
        ['-b', bootstrap, '-P', '-t', `golden-kcat-${codec}`, '-K', ':', '-H', 'h=v', '-z', codec],
        { input: `${lines}\n` },
      ),
    );
  }
  await must(run('kcat', ['-b', bootstrap, '-C', '-t', 'golden-kcat-none', '-o', 'beginning', '-e']));
  // A balanced consumer: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetFetch, OffsetCommit, LeaveGroup.
  await must(
    run(
      'kcat',
      [
        '-b',
        bootstrap,
        '-G',
        'golden-kcat-group',
        'golden-kcat-none',
        '-c',
        '3',
        '-X',
        'auto.offset.reset=earliest',
      ],
      { timeoutMs: 60_000 },
    ),
  );
};

const kafkaPython: Client = async (bootstrap) => {
  const script = `
import sys
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
b = sys.argv[1]
admin = KafkaAdminClient(bootstrap_servers=b)
admin.create_topics([NewTopic(name='golden-py-' + c, num_partitions=1, replication_factor=1) for c in ['none','gzip','snappy','lz4','zstd']])
for c in ['none','gzip','snappy','lz4','zstd']:
    p = KafkaProducer(bootstrap_servers=b, compression_type=None if c == 'none' else c)
    for i in range(3):
        p.send('golden-py-' + c, key=('k%d' % i).encode(), value=('golden-%s-%d' % (c, i) + '.' * 300).encode(), headers=[('h', b'v')]).get(timeout=10)
    p.close()
c = KafkaConsumer(bootstrap_servers=b, consumer_timeout_ms=2000)
c.assign([TopicPartition('golden-py-none', 0)])
c.seek_to_beginning()
n = sum(1 for _ in c)
assert n == 3, n
`;
  await must(run('/usr/bin/python3', ['-c', script, bootstrap], { timeoutMs: 60_000 }));
};

const kafkajsClient: Client = async (bootstrap) => {
  const { Kafka, CompressionTypes, logLevel } = (await import('kafkajs')).default;
  const kafka = new Kafka({ clientId: 'golden', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: 'golden-kjs-gzip', numPartitions: 1 }],
    waitForLeaders: true,
  });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({
    topic: 'golden-kjs-gzip',
    compression: CompressionTypes.GZIP,
    messages: [0, 1, 2].map((i) => ({
      key: `k${i}`,
      value: `golden-gzip-${i}${PADDING}`,
      headers: { h: 'v' },
    })),
  });
  await producer.disconnect();
  // A group consumer that commits what it read.
  const consumer = kafka.consumer({ groupId: 'golden-kjs-group' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'golden-kjs-gzip', fromBeginning: true });
  let seen = 0;
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        eachMessage: async () => {
          seen++;
          if (seen === 3) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
};

const platformatic: Client = async (bootstrap) => {
  const { Admin, Producer, stringSerializers } = await import('@platformatic/kafka');
  const admin = new Admin({ clientId: 'golden', bootstrapBrokers: [bootstrap] });
  await admin.createTopics({ topics: ['golden-plt-snappy'], partitions: 1, replicas: 1 });
  await admin.close();
  const producer = new Producer({
    clientId: 'golden',
    bootstrapBrokers: [bootstrap],
    serializers: stringSerializers,
    compression: 'snappy',
    idempotent: true,
  });
  await producer.send({
    messages: [0, 1, 2].map((i) => ({
      topic: 'golden-plt-snappy',
      partition: 0,
      key: `k${i}`,
      value: `golden-snappy-${i}${PADDING}`,
      headers: new Map([['h', 'v']]),
    })),
  });
  await producer.close();
};

async function must(result: Promise<{ code: number | null; stderr: string }>): Promise<void> {
  const r = await result;
  if (r.code !== 0) throw new Error(`client failed: ${r.stderr}`);
}

async function record(name: string, client: Client): Promise<void> {
  const proxy = new CaptureProxy();
  const port = await proxy.listen();
  const broker = await startBroker({
    overrides: { 'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}` },
  });
  proxy.targetPort = broker.port;
  try {
    await client(`127.0.0.1:${port}`);
  } finally {
    await proxy.close();
    await broker.stop();
  }
  const lines = proxy.frames.map((f) =>
    JSON.stringify({ apiKey: f.apiKey, apiVersion: f.apiVersion, frame: f.frame.toString('base64') }),
  );
  writeFileSync(join(OUT, `${name}.jsonl`), `${lines.join('\n')}\n`);
  process.stdout.write(`${name}: ${lines.length} request frames\n`);
}

mkdirSync(OUT, { recursive: true });
await record('kcat', kcat);
await record('kafka-python', kafkaPython);
await record('kafkajs', kafkajsClient);
await record('platformatic-kafka', platformatic);
