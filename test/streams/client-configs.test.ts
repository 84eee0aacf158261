// The client keys of a streams config reach the instance's clients as Kafka's StreamsConfig layers them, through
// a real broker: `producer.` keys over unprefixed ones for the producer (the output batches' codec),
// `main.consumer.` over unprefixed ones for the main consumer (auto.offset.reset), client.id as the base of the
// member client ids, unprefixed security.protocol and sasl.* for every client (a SASL listener), and the keys
// Streams controls itself or Brook's client lacks logged and ignored, not refused.

import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { resolveConfig } from '../../src/streams/config.js';
import {
  Consumed,
  KafkaStreams,
  Produced,
  Serdes,
  StreamsBuilder,
  type StreamsProperties,
} from '../../src/streams/index.js';
import { saslOverrides } from '../helpers/acl-broker.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { untilValue, waitUntil } from '../helpers/wait.js';
import { fetchBody, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';
import { stateDir, TopicFollower } from './streams-helpers.js';

let broker: BrokerProcess | undefined;
let plainPort: number;
let saslPort: number;
const dirs: string[] = [];
const plain = (): string => `127.0.0.1:${plainPort}`;

before(async () => {
  plainPort = await freePort();
  saslPort = await freePort();
  // A PLAINTEXT listener and a SASL_PLAINTEXT one (PLAIN: alice, bob, carol), no authorizer.
  const overrides = saslOverrides(plainPort, saslPort);
  delete overrides['authorizer.class.name'];
  delete overrides['super.users'];
  broker = await startBroker({ port: plainPort, overrides: { ...overrides, 'num.partitions': 1 } });
  const admin = new Admin({ bootstrapServers: plain() });
  try {
    for (const topic of [
      'codec-in',
      'codec-out',
      'reset-in',
      'reset-out',
      'sasl-in',
      'sasl-out',
      'static-in',
      'static-out',
      'ids-in',
      'ids-out',
    ]) {
      const [r] = await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
      assert.equal(r!.error, null);
    }
  } finally {
    await admin.close();
  }
});

after(async () => {
  await broker?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** input -> upper-cased values -> output. */
function upperCase(input: string, output: string) {
  const builder = new StreamsBuilder();
  builder
    .stream(input, Consumed.with(Serdes.String(), Serdes.String()))
    .mapValues((v) => v.toUpperCase())
    .to(output, Produced.with(Serdes.String(), Serdes.String()));
  return builder.build();
}

function streamsOf(input: string, output: string, props: StreamsProperties, log: string[] = []) {
  const dir = stateDir();
  dirs.push(dir);
  const streams = new KafkaStreams(upperCase(input, output), {
    'state.dir': dir,
    'commit.interval.ms': 100,
    ...props,
  });
  streams.setLogger((m) => log.push(m));
  return streams;
}

async function send(bootstrap: string, topic: string, keys: string[], extra: object = {}): Promise<void> {
  const producer = new Producer({ bootstrapServers: bootstrap, ...extra });
  try {
    for (const k of keys) await producer.send({ topic, key: Buffer.from(k), value: Buffer.from(k) });
  } finally {
    await producer.close();
  }
}

/** The compression codec id of every batch of partition 0 of `topic` (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd). */
async function batchCodecs(topic: string): Promise<number[]> {
  const client = await WireClient.connect('127.0.0.1', plainPort);
  try {
    const response = await client.call(ApiKey.FETCH, 12, fetchBody(topic, 0, 0));
    const bytes: Buffer = response.responses[0].partitions[0].records;
    const codecs: number[] = [];
    for (let pos = 0; pos + 61 <= bytes.length; pos += 12 + bytes.readInt32BE(pos + 8))
      codecs.push(batchHeader.compression(bytes, pos));
    return codecs;
  } finally {
    client.close();
  }
}

describe('streams client configs', () => {
  it('producer.compression.type wins over the unprefixed key: the output batches are lz4', async () => {
    await send(plain(), 'codec-in', ['a', 'b', 'c']);
    const streams = streamsOf('codec-in', 'codec-out', {
      'application.id': 'codec-app',
      'bootstrap.servers': plain(),
      'compression.type': 'gzip',
      'producer.compression.type': 'lz4',
    });
    const out = new TopicFollower(plain(), 'codec-out', 1);
    out.start();
    try {
      await streams.start();
      await waitUntil(
        () => out.records.length >= 3,
        30_000,
        () => `${out.records.length} of 3 outputs`,
      );
    } finally {
      await streams.close();
      await out.stop();
    }
    const codecs = await batchCodecs('codec-out');
    assert.ok(codecs.length > 0);
    assert.deepEqual(new Set(codecs), new Set([3]), `codecs of the output batches: ${codecs.join(',')}`);
  });

  it('main.consumer.auto.offset.reset beats the bare key; client.id names members; ignored keys logged', async () => {
    await send(plain(), 'reset-in', ['before-1', 'before-2']);
    const log: string[] = [];
    const streams = streamsOf(
      'reset-in',
      'reset-out',
      {
        'application.id': 'reset-app',
        'bootstrap.servers': plain(),
        'client.id': 'reset-client',
        'auto.offset.reset': 'earliest',
        'main.consumer.auto.offset.reset': 'latest',
        'consumer.enable.auto.commit': 'true',
        'producer.no.such.key': 'x',
      },
      log,
    );
    const out = new TopicFollower(plain(), 'reset-out', 1);
    out.start();
    const admin = new Admin({ bootstrapServers: plain() });
    try {
      await streams.start();
      await waitUntil(
        () => streams.state() === 'RUNNING',
        30_000,
        () => streams.state(),
      );
      // The group has its member (so the partition has its position) before the later records are written.
      const group = await untilValue('the stable group', async () => {
        const [g] = await admin.describeGroups(['reset-app']);
        return g!.state === 'Stable' && g!.members.length === 1 ? g! : null;
      });
      const clientIds = group.members.map((m) => m.clientId);
      assert.deepEqual(clientIds, ['reset-client-StreamThread-1-consumer']);
      await new Promise((r) => setTimeout(r, 500));
      await send(plain(), 'reset-in', ['after-1', 'after-2']);
      await waitUntil(
        () => out.records.length >= 2,
        30_000,
        () => `${out.records.length} of 2 outputs`,
      );
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await admin.close();
      await streams.close();
      await out.stop();
    }
    assert.deepEqual(
      out.records.map((r) => r.key),
      ['after-1', 'after-2'],
      'the records written before the start are skipped',
    );
    assert.ok(
      log.some((l) => l.includes("Unexpected user-specified consumer config 'enable.auto.commit'")),
      log.join('\n'),
    );
    assert.ok(
      log.some((l) => l.includes("'producer.no.such.key'")),
      log.join('\n'),
    );
  });

  it("group.instance.id reaches each stream thread's consumer as <id>-<thread index>: static members", async () => {
    const streams = streamsOf('static-in', 'static-out', {
      'application.id': 'static-app',
      'bootstrap.servers': plain(),
      'num.stream.threads': 2,
      'group.instance.id': 'static-instance',
    });
    const admin = new Admin({ bootstrapServers: plain() });
    try {
      await streams.start();
      const group = await untilValue('the stable group of two members', async () => {
        const [g] = await admin.describeGroups(['static-app']);
        return g!.state === 'Stable' && g!.members.length === 2 ? g! : null;
      });
      const instanceIds = group.members.map((m) => m.groupInstanceId).sort();
      assert.deepEqual(instanceIds, ['static-instance-1', 'static-instance-2']);
    } finally {
      await admin.close();
      await streams.close();
    }
  });

  it('without client.id, clients are named <application.id>-<process id>-StreamThread-<n>-consumer', async () => {
    const dir = stateDir();
    dirs.push(dir);
    const streams = streamsOf('ids-in', 'ids-out', {
      'application.id': 'ids-app',
      'bootstrap.servers': plain(),
      'state.dir': dir,
    });
    const admin = new Admin({ bootstrapServers: plain() });
    try {
      await streams.start();
      const group = await untilValue('the stable group', async () => {
        const [g] = await admin.describeGroups(['ids-app']);
        return g!.state === 'Stable' && g!.members.length === 1 ? g! : null;
      });
      // The process id Kafka Streams keeps in the state directory, as a user would find it.
      const metadata = readFileSync(join(dir, 'ids-app', 'kafka-streams-process-metadata'), 'utf8');
      const processId = (JSON.parse(metadata) as { processId: string }).processId;
      assert.match(processId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.deepEqual(
        group.members.map((m) => m.clientId),
        [`ids-app-${processId}-StreamThread-1-consumer`],
      );
    } finally {
      await admin.close();
      await streams.close();
    }
  });

  it('unprefixed security.protocol and sasl.* reach every client: the app runs on a SASL listener', async () => {
    const sasl = {
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'PLAIN',
      'sasl.jaas.config':
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";',
    };
    await send(`127.0.0.1:${saslPort}`, 'sasl-in', ['s-1', 's-2'], {
      sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
    });
    const streams = streamsOf('sasl-in', 'sasl-out', {
      'application.id': 'sasl-app',
      'bootstrap.servers': `127.0.0.1:${saslPort}`,
      ...sasl,
    });
    const out = new TopicFollower(plain(), 'sasl-out', 1);
    out.start();
    try {
      // Without the keys, the clients speak PLAINTEXT to the SASL listener and never get anywhere.
      const started = streams.start();
      started.catch(() => {});
      await Promise.race([
        started,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('start did not complete in 20 s')), 20_000),
        ),
      ]);
      await waitUntil(
        () => out.records.length >= 2,
        30_000,
        () => `${out.records.length} of 2 outputs`,
      );
      assert.deepEqual(
        out.records.map((r) => r.value?.toString()),
        ['S-1', 'S-2'],
      );
    } finally {
      await streams.close();
      await out.stop();
    }
  });
});

describe('streams client defaults (Kafka StreamsConfig CONSUMER_DEFAULT_OVERRIDES, PRODUCER_EOS_OVERRIDES)', () => {
  const base = { 'application.id': 'defaults-app', 'bootstrap.servers': '127.0.0.1:1' };

  it('every consumer polls up to 1000 records unless the properties say otherwise', () => {
    const clients = resolveConfig(base, true).clients;
    for (const c of [clients.mainConsumer, clients.restoreConsumer, clients.globalConsumer])
      assert.equal(c.maxPollRecords, 1000);
    const given = resolveConfig(
      { ...base, 'max.poll.records': 50, 'main.consumer.max.poll.records': 7 },
      true,
    );
    assert.equal(given.clients.mainConsumer.maxPollRecords, 7);
    assert.equal(given.clients.restoreConsumer.maxPollRecords, 50);
  });

  it('under exactly-once the producer waits without a delivery timeout (Integer.MAX_VALUE) unless told', () => {
    const eos = { ...base, 'processing.guarantee': 'exactly_once_v2' } as const;
    const producer = resolveConfig(eos, true).clients.producer;
    assert.equal(producer.deliveryTimeoutMs, 2_147_483_647);
    assert.equal(producer.transactionTimeoutMs, 10_000);
    assert.equal(producer.lingerMs, 100);
    const given = resolveConfig({ ...eos, 'producer.delivery.timeout.ms': 60_000, 'linger.ms': 5 }, true);
    assert.equal(given.clients.producer.deliveryTimeoutMs, 60_000);
    assert.equal(given.clients.producer.lingerMs, 5);
    const atLeastOnce = resolveConfig(base, true).clients.producer;
    assert.equal(atLeastOnce.deliveryTimeoutMs, undefined, 'the client default (120 s) at least once');
    assert.equal(atLeastOnce.lingerMs, 100);
  });
});
