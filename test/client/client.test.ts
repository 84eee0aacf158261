// Brook's client against a real broker process: produce and consume with every codec, idempotent sequences,
// offsets and seeks, pause and resume, admin calls, version negotiation, pipelining and request timeouts.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { after, before, test } from 'node:test';
import tls from 'node:tls';
import { Admin } from '../../src/client/admin.js';
import { Connection } from '../../src/client/connection.js';
import { Consumer } from '../../src/client/consumer.js';
import { ConnectionError, KafkaClientError, RequestTimeoutError } from '../../src/client/errors.js';
import { resolveClientOptions } from '../../src/client/options.js';
import { Producer } from '../../src/client/producer.js';
import { int32Serde, jsonSerde, stringSerde } from '../../src/client/serdes.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';

let broker: BrokerProcess;
let admin: Admin;

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1 } });
  admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'client-test' });
});

after(async () => {
  await admin?.close();
  await broker?.stop();
});

async function createTopic(topic: string, numPartitions = 1): Promise<void> {
  const [r] = await admin.createTopics([{ topic, numPartitions, replicationFactor: 1 }]);
  assert.equal(r!.error, null);
}

async function consumeAll<K, V>(c: Consumer<K, V>, count: number, timeoutMs = 10_000) {
  const out = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < count && Date.now() < deadline) out.push(...(await c.poll(500)));
  return out;
}

test('connections negotiate the highest common version and pipeline requests', async () => {
  const c = await Connection.connect(
    broker.host,
    broker.port,
    resolveClientOptions({ bootstrapServers: broker.bootstrap }),
  );
  try {
    const v = c.pickVersion(ApiKey.METADATA);
    assert.equal(v, Math.min(getApi(ApiKey.METADATA).maxVersion, c.versionRange(ApiKey.METADATA)!.max));
    assert.equal(c.pickVersion(ApiKey.PRODUCE), 11, 'Produce is capped where topic ids would start');
    // The consumer's Fetch takes the newest version (by topic id), and caps itself at 12 for a topic without one.
    assert.equal(
      c.pickVersion(ApiKey.FETCH),
      Math.min(getApi(ApiKey.FETCH).maxVersion, c.versionRange(ApiKey.FETCH)!.max),
    );
    assert.equal(c.pickVersion(ApiKey.FETCH, 12), 12);
    const body = {
      topics: [],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    };
    const all = await Promise.all(
      Array.from({ length: 50 }, () => c.request<MetadataResponse>(ApiKey.METADATA, body)),
    );
    assert.equal(all.length, 50);
    for (const r of all) assert.equal(r.brokers[0]!.port, broker.port);
  } finally {
    c.close();
  }
  await assert.rejects(
    () => Connection.connect('127.0.0.1', 1, resolveClientOptions({ bootstrapServers: '127.0.0.1:1' })),
    ConnectionError,
  );
});

test('connections speak TLS when given TLS options, and check the certificate', async () => {
  // The broker process listens in plaintext here; a TLS terminator in front of it stands in for an SSL listener.
  const fixtures = new URL('../../../test/network/fixtures/', import.meta.url);
  const cert = readFileSync(new URL('localhost-cert.pem', fixtures));
  const key = readFileSync(new URL('localhost-key.pem', fixtures));
  const sockets: net.Socket[] = [];
  const terminator = tls.createServer({ key, cert }, (s) => {
    const upstream = net.connect(broker.port, broker.host);
    sockets.push(s, upstream);
    s.pipe(upstream).pipe(s);
    s.on('error', () => upstream.destroy());
    upstream.on('error', () => s.destroy());
  });
  await new Promise<void>((r) => terminator.listen(0, '127.0.0.1', r));
  const port = (terminator.address() as net.AddressInfo).port;
  try {
    const options = resolveClientOptions({
      bootstrapServers: `127.0.0.1:${port}`,
      tls: { ca: cert, servername: 'localhost' },
    });
    const c = await Connection.connect('127.0.0.1', port, options);
    const res = await c.request<MetadataResponse>(ApiKey.METADATA, {
      topics: [],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.equal(res.brokers[0]!.nodeId, 0);
    c.close();
    await assert.rejects(
      () => Connection.connect('127.0.0.1', port, resolveClientOptions({ bootstrapServers: 'x:1', tls: {} })),
      /self[- ]signed|unable to verify|certificate/i,
    );
  } finally {
    for (const s of sockets) s.destroy();
    terminator.close();
  }
});

test('a broker that never answers fails the request with a timeout', async () => {
  const sockets: net.Socket[] = [];
  const silent = net.createServer((s) => sockets.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as net.AddressInfo).port;
  try {
    await assert.rejects(
      () =>
        Connection.connect(
          '127.0.0.1',
          port,
          resolveClientOptions({ bootstrapServers: `127.0.0.1:${port}`, requestTimeoutMs: 300 }),
        ),
      RequestTimeoutError,
    );
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
  }
});

test('records round-trip with keys, headers and each compression codec', async () => {
  for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
    const topic = `roundtrip-${compression}`;
    await createTopic(topic, 2);
    const producer = new Producer<string, string>({
      bootstrapServers: broker.bootstrap,
      compression,
      keySerializer: stringSerde as never,
      valueSerializer: stringSerde as never,
    });
    const sent = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        producer.send({ topic, key: `k${i % 5}`, value: `v${i}`, headers: { h: `x${i}` } }),
      ),
    );
    await producer.close();
    for (const m of sent) assert.ok(m.offset >= 0);
    const consumer = new Consumer<string, string>({
      bootstrapServers: broker.bootstrap,
      autoOffsetReset: 'earliest',
      keyDeserializer: stringSerde as never,
      valueDeserializer: stringSerde as never,
    });
    consumer.assign([
      { topic, partition: 0 },
      { topic, partition: 1 },
    ]);
    const got = await consumeAll(consumer, 100);
    await consumer.close();
    assert.equal(got.length, 100, compression);
    const byValue = new Map(got.map((r) => [r.value, r]));
    for (let i = 0; i < 100; i++) {
      const r = byValue.get(`v${i}`)!;
      assert.equal(r.key, `k${i % 5}`);
      assert.equal(r.headers[0]!.key, 'h');
      assert.equal(r.headers[0]!.value!.toString(), `x${i}`);
      assert.equal(r.partition, sent[i]!.partition);
      assert.equal(r.offset, sent[i]!.offset);
    }
    // Same key, same partition.
    for (let i = 5; i < 100; i++) assert.equal(sent[i]!.partition, sent[i - 5]!.partition);
  }
});

test('the idempotent producer writes one producer id with consecutive sequences', async () => {
  const topic = 'idempotent';
  await createTopic(topic);
  const producer = new Producer({ bootstrapServers: broker.bootstrap, lingerMs: 0, batchSize: 200 });
  assert.equal(producer.idempotent, true);
  const sent = await Promise.all(
    Array.from({ length: 300 }, (_, i) => producer.send({ topic, value: Buffer.from(`value-${i}`) })),
  );
  await producer.close();
  assert.deepEqual(
    sent.map((m) => m.offset),
    Array.from({ length: 300 }, (_, i) => i),
    'send order is log order',
  );
  const ends = await admin.listOffsets([{ topic, partition: 0, spec: 'latest' }]);
  assert.equal(ends[0]!.offset, 300);
});

test('batch buffers are reused once their batch is acknowledged, and no record is overwritten by a later batch', async () => {
  const topic = 'buffer-reuse';
  await createTopic(topic);
  // Small batches and one request in flight: the backlog grows batches past batch.size, so both sizes of buffer
  // go through the pool many times while later batches are being written.
  const producer = new Producer({
    bootstrapServers: broker.bootstrap,
    lingerMs: 0,
    batchSize: 512,
    maxInFlightRequestsPerConnection: 1,
    idempotent: false,
  });
  const waves = 20;
  const perWave = 300;
  for (let w = 0; w < waves; w++) {
    const sends = Array.from({ length: perWave }, (_, i) =>
      producer.send({ topic, value: Buffer.from(`wave-${w}-record-${i}-${'x'.repeat(i % 50)}`) }),
    );
    const sent = await Promise.all(sends);
    assert.equal(sent.at(-1)!.offset, (w + 1) * perWave - 1);
  }
  const pooled = (producer as unknown as { accumulator: { bufferPool: { bytes: number } } }).accumulator
    .bufferPool.bytes;
  assert.ok(pooled > 0, 'finished batches gave their buffers back');
  await producer.close();
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, autoOffsetReset: 'earliest' });
  consumer.assign([{ topic, partition: 0 }]);
  const records = await consumeAll(consumer, waves * perWave);
  await consumer.close();
  assert.equal(records.length, waves * perWave);
  for (const r of records) {
    const w = Math.floor(r.offset / perWave);
    const i = r.offset % perWave;
    assert.equal(r.value!.toString(), `wave-${w}-record-${i}-${'x'.repeat(i % 50)}`, `offset ${r.offset}`);
  }
});

test('sendBatch resolves once with every record in order; a backlog behind the in-flight limit leaves as few large batches', async () => {
  const topic = 'send-batch';
  await createTopic(topic);
  const producer = new Producer({ bootstrapServers: broker.bootstrap, lingerMs: 0, batchSize: 1000 });
  await producer.connect();
  let produceRequests = 0;
  const send = producer.cluster.send.bind(producer.cluster);
  producer.cluster.send = ((leader: number, apiKey: number, ...rest: unknown[]) => {
    if (apiKey === ApiKey.PRODUCE) produceRequests++;
    return (send as (...a: unknown[]) => Promise<unknown>)(leader, apiKey, ...rest);
  }) as typeof producer.cluster.send;
  const calls = Array.from({ length: 20 }, (_, c) =>
    producer.sendBatch(
      Array.from({ length: 100 }, (_, i) => ({ topic, value: Buffer.from(`v-${c * 100 + i}`) })),
    ),
  );
  const results = await Promise.all(calls);
  // About 14 bytes a record in 1000-byte batches would be over 40 requests; with five in flight the rest
  // accumulates in the open batch and leaves in far fewer.
  assert.ok(produceRequests < 30, `${produceRequests} produce requests`);
  assert.deepEqual(
    results.flat().map((m) => m.offset),
    Array.from({ length: 2000 }, (_, i) => i),
    'call order and record order are log order',
  );
  await assert.rejects(
    () =>
      producer.sendBatch([
        { topic, value: Buffer.from('ok') },
        { topic, value: Buffer.alloc(2 << 20) },
      ]),
    /exceeds max.request.size/,
  );
  await producer.close();
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, maxPollRecords: 5000 });
  consumer.assign([{ topic, partition: 0 }]);
  consumer.seek({ topic, partition: 0 }, 0);
  const got = await consumeAll(consumer, 2001);
  await consumer.close();
  assert.equal(got.length, 2001);
  assert.deepEqual(
    got.slice(0, 2000).map((r) => r.value!.toString()),
    Array.from({ length: 2000 }, (_, i) => `v-${i}`),
  );
});

test('acks=0 and acks=1 deliver; flush waits for outstanding records', async () => {
  const topic = 'acks';
  await createTopic(topic);
  const p0 = new Producer({ bootstrapServers: broker.bootstrap, acks: 0 });
  const m0 = p0.send({ topic, value: Buffer.from('a') });
  await p0.flush();
  assert.equal((await m0).offset, -1);
  await p0.close();
  const p1 = new Producer({ bootstrapServers: broker.bootstrap, acks: 1, lingerMs: 1000 });
  assert.equal(p1.idempotent, false);
  const m1 = p1.send({ topic, value: Buffer.from('b') });
  const started = Date.now();
  await p1.flush();
  assert.ok(Date.now() - started < 900, 'flush does not wait for linger.ms');
  assert.equal((await m1).offset, 1);
  await p1.close();
});

test('buffer.memory blocks send until space frees, and max.block.ms bounds the wait', async () => {
  const topic = 'backpressure';
  await createTopic(topic);
  const producer = new Producer({
    bootstrapServers: broker.bootstrap,
    bufferMemory: 2000,
    maxBlockMs: 10_000,
  });
  const all = await Promise.all(
    Array.from({ length: 200 }, (_, i) => producer.send({ topic, value: Buffer.alloc(100, i) })),
  );
  assert.equal(all.length, 200);
  await producer.close();
  const tiny = new Producer({
    bootstrapServers: broker.bootstrap,
    maxBlockMs: 500,
    allowAutoCreateTopics: false,
  });
  await assert.rejects(() => tiny.send({ topic: 'no-such-topic', value: null }), /not present in metadata/);
  await tiny.close();
});

test('consumer offsets: seek, beginning and end, offsetsForTimes, pause and resume, reset none', async () => {
  const topic = 'offsets';
  await createTopic(topic);
  const producer = new Producer<number, unknown>({
    bootstrapServers: broker.bootstrap,
    keySerializer: int32Serde as never,
    valueSerializer: jsonSerde() as never,
  });
  const base = Date.now() - 100_000;
  for (let i = 0; i < 20; i++)
    await producer.send({ topic, key: i, value: { i }, timestamp: base + i * 1000 });
  await producer.close();
  const consumer = new Consumer<number | null, { i: number } | null>({
    bootstrapServers: broker.bootstrap,
    keyDeserializer: int32Serde,
    valueDeserializer: jsonSerde<{ i: number }>(),
  });
  const tp = { topic, partition: 0 };
  consumer.assign([tp]);
  assert.equal(await consumer.position(tp), 20, 'latest by default');
  consumer.seek(tp, 15);
  let got = await consumeAll(consumer, 5);
  assert.deepEqual(
    got.map((r) => r.key),
    [15, 16, 17, 18, 19],
  );
  assert.deepEqual(
    got.map((r) => r.value!.i),
    [15, 16, 17, 18, 19],
  );
  await consumer.seekToBeginning([tp]);
  assert.equal(await consumer.position(tp), 0);
  const [at] = await consumer.offsetsForTimes([{ ...tp, timestamp: base + 7500 }]);
  assert.equal(at!.offset, 8);
  const [none] = await consumer.offsetsForTimes([{ ...tp, timestamp: base + 10_000_000 }]);
  assert.equal(none, null);
  consumer.pause([tp]);
  assert.deepEqual(await consumer.poll(300), []);
  assert.deepEqual(consumer.paused(), [tp]);
  consumer.resume([tp]);
  got = await consumeAll(consumer, 20);
  assert.equal(got[0]!.offset, 0);
  assert.equal(got.length, 20);
  await consumer.seekToEnd([tp]);
  assert.equal(await consumer.position(tp), 20);
  const [end] = await consumer.endOffsets([tp]);
  assert.equal(end!.offset, 20);
  await consumer.close();

  const strict = new Consumer({ bootstrapServers: broker.bootstrap, autoOffsetReset: 'none' });
  strict.assign([tp]);
  await assert.rejects(() => strict.poll(100), /no reset policy/);
  strict.seek(tp, 1000);
  await assert.rejects(() => consumeAll(strict, 1, 3000), /OFFSET_OUT_OF_RANGE/);
  await strict.close();
});

test('fetch sessions: incremental fetches deliver every record, through seeks and pauses', async () => {
  const topic = 'sessions';
  await createTopic(topic, 3);
  const producer = new Producer({
    bootstrapServers: broker.bootstrap,
    partitioner: 'round-robin',
    lingerMs: 0,
  });
  const first = await Promise.all(
    Array.from({ length: 30 }, (_, i) => producer.send({ topic, value: Buffer.from(`a${i}`) })),
  );
  assert.deepEqual(new Set(first.map((m) => m.partition)), new Set([0, 1, 2]));
  const consumer = new Consumer({
    bootstrapServers: broker.bootstrap,
    autoOffsetReset: 'earliest',
    fetchMaxWaitMs: 100,
  });
  const tps = [0, 1, 2].map((partition) => ({ topic, partition }));
  consumer.assign(tps);
  let got = await consumeAll(consumer, 30);
  assert.equal(got.length, 30);
  consumer.pause([tps[1]!]);
  await Promise.all(
    Array.from({ length: 30 }, (_, i) => producer.send({ topic, value: Buffer.from(`b${i}`) })),
  );
  got = await consumeAll(consumer, 20);
  assert.equal(got.length, 20);
  assert.ok(
    got.every((r) => r.partition !== 1),
    'a paused partition, forgotten by the session, yields nothing',
  );
  consumer.resume([tps[1]!]);
  consumer.seek(tps[0]!, 0);
  got = await consumeAll(consumer, 30);
  assert.equal(
    got.filter((r) => r.partition === 1).length,
    10,
    'the resumed partition returns with its backlog',
  );
  assert.equal(
    got.filter((r) => r.partition === 0).length,
    20,
    'the seek re-reads partition 0 from the start',
  );
  const session = consumer.sessions.get(0)!;
  assert.notEqual(session.sessionId, 0, 'the broker opened a session');
  assert.ok(session.incrementalFetches > 0, 'later fetches were incremental');
  await producer.close();
  await consumer.close();
});

test('prefetch without poll() stops at two chunks per partition and at fetch.max.bytes over all of them', async () => {
  const topic = 'prefetch-bound';
  await createTopic(topic, 4);
  const producer = new Producer({
    bootstrapServers: broker.bootstrap,
    batchSize: 2000,
    maxRequestSize: 5000,
    partitioner: 'round-robin',
  });
  await producer.sendBatch(Array.from({ length: 400 }, (_, i) => ({ topic, value: Buffer.alloc(1000, i) })));
  await producer.close();
  const fetchMaxBytes = 12_000;
  const consumer = new Consumer({
    bootstrapServers: broker.bootstrap,
    maxPartitionFetchBytes: 6000,
    fetchMaxBytes,
    maxPollRecords: 1,
  });
  consumer.assign([0, 1, 2, 3].map((partition) => ({ topic, partition })));
  for (let partition = 0; partition < 4; partition++) consumer.seek({ topic, partition }, 0);
  let fetches = 0;
  // The consumer's Fetch goes through sendForVersion (its body depends on the version: by topic id from v13).
  const send = consumer.cluster.sendForVersion.bind(consumer.cluster);
  consumer.cluster.sendForVersion = ((leader: number, apiKey: number, ...rest: unknown[]) => {
    if (apiKey === ApiKey.FETCH) fetches++;
    return (send as (...a: unknown[]) => Promise<unknown>)(leader, apiKey, ...rest);
  }) as typeof consumer.cluster.sendForVersion;
  const first = await consumeAll(consumer, 1);
  assert.equal(first.length, 1);
  await new Promise((r) => setTimeout(r, 500));
  const buffered = consumer.bufferedBytes;
  assert.ok(buffered > 0, 'fetched ahead without poll()');
  assert.ok(buffered <= 2 * fetchMaxBytes, `${buffered} bytes buffered`);
  const settled = fetches;
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(fetches, settled, 'no fetch while the buffer is full');
  const rest = await consumeAll(consumer, 399);
  await consumer.close();
  assert.equal(rest.length, 399);
  const byPartition = new Map<number, number[]>();
  for (const r of [...first, ...rest]) {
    if (!byPartition.has(r.partition)) byPartition.set(r.partition, []);
    byPartition.get(r.partition)!.push(r.offset);
  }
  for (const offsets of byPartition.values()) {
    assert.deepEqual(
      offsets,
      Array.from({ length: offsets.length }, (_, i) => i),
      'each partition in order',
    );
  }
});

test('async iterator and run() deliver records in order', async () => {
  const topic = 'iterate';
  await createTopic(topic);
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  await Promise.all(
    Array.from({ length: 30 }, (_, i) => producer.send({ topic, value: Buffer.from(String(i)) })),
  );
  await producer.close();
  const consumer = new Consumer({
    bootstrapServers: broker.bootstrap,
    autoOffsetReset: 'earliest',
    maxPollRecords: 7,
  });
  consumer.assign([{ topic, partition: 0 }]);
  const seen: number[] = [];
  for await (const r of consumer) {
    seen.push(r.offset);
    if (seen.length === 30) break;
  }
  assert.deepEqual(
    seen,
    Array.from({ length: 30 }, (_, i) => i),
  );
  consumer.seek({ topic, partition: 0 }, 10);
  const values: string[] = [];
  await consumer.run({
    eachRecord: (r) => {
      values.push(r.value!.toString());
      if (values.length === 20) consumer.stop();
    },
  });
  assert.equal(values[0], '10');
  assert.equal(values[19], '29');
  await consumer.close();
});

test('admin: topics, partitions, configs, cluster, log dirs, delete records', async () => {
  await createTopic('admin-a', 2);
  const dup = await admin.createTopics([{ topic: 'admin-a', numPartitions: 1 }]);
  assert.equal(dup[0]!.error!.type, 'TOPIC_ALREADY_EXISTS');
  assert.ok((await admin.listTopics()).includes('admin-a'));
  const [d] = await admin.describeTopics(['admin-a']);
  assert.equal(d!.partitions.length, 2);
  assert.equal(d!.partitions[0]!.leader, 0);
  const [missing] = await admin.describeTopics(['admin-missing']);
  assert.equal(missing!.error!.type, 'UNKNOWN_TOPIC_OR_PARTITION');
  assert.equal((await admin.createPartitions([{ topic: 'admin-a', count: 4 }]))[0]!.error, null);
  assert.equal((await admin.describeTopics(['admin-a']))[0]!.partitions.length, 4);

  const inc = await admin.incrementalAlterConfigs([
    { type: 'topic', name: 'admin-a', ops: [{ name: 'retention.ms', op: 'set', value: '12345' }] },
  ]);
  assert.equal(inc[0]!.error, null);
  const [cfg] = await admin.describeConfigs([{ type: 'topic', name: 'admin-a' }]);
  const retention = cfg!.configs.find((c) => c.name === 'retention.ms')!;
  assert.equal(retention.value, '12345');
  assert.equal(retention.source, 'DYNAMIC_TOPIC_CONFIG');
  await admin.incrementalAlterConfigs([
    { type: 'topic', name: 'admin-a', ops: [{ name: 'retention.ms', op: 'delete' }] },
  ]);
  const [cfg2] = await admin.describeConfigs([{ type: 'topic', name: 'admin-a', keys: ['retention.ms'] }]);
  assert.notEqual(cfg2!.configs[0]!.value, '12345');

  const cluster = await admin.describeCluster();
  assert.equal(cluster.brokers[0]!.port, broker.port);

  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  await Promise.all(
    Array.from({ length: 10 }, () =>
      producer.send({ topic: 'admin-a', partition: 0, value: Buffer.from('x') }),
    ),
  );
  await producer.close();
  const dirs = await admin.describeLogDirs();
  assert.ok(dirs[0]!.partitions.some((p) => p.topic === 'admin-a' && p.partition === 0 && p.size > 0));
  const [del] = await admin.deleteRecords([{ topic: 'admin-a', partition: 0, offset: 4 }]);
  assert.equal(del!.error, null);
  assert.equal(del!.lowWatermark, 4);
  const [earliest, latest] = await admin.listOffsets([
    { topic: 'admin-a', partition: 0, spec: 'earliest' },
    { topic: 'admin-a', partition: 0, spec: 'latest' },
  ]);
  assert.equal(earliest!.offset, 4, 'one partition asked twice in one call gets both answers');
  assert.equal(latest!.offset, 10);
  const [emptyStart] = await admin.listOffsets([{ topic: 'admin-a', partition: 3, spec: 'earliest' }]);
  assert.equal(emptyStart!.offset, 0, 'an empty partition starts at 0, never -1');

  const elected = await admin.electLeaders('preferred', [{ topic: 'admin-a', partition: 0 }]);
  assert.equal(elected.length, 1);
  assert.equal(elected[0]!.error?.type ?? 'NONE', 'ELECTION_NOT_NEEDED', 'the only replica already leads');

  assert.equal((await admin.deleteTopics(['admin-a']))[0]!.error, null);
  const gone = await admin.deleteTopics(['admin-a']);
  assert.equal(gone[0]!.error!.type, 'UNKNOWN_TOPIC_OR_PARTITION');
});

test('calls after close fail clearly', async () => {
  const p = new Producer({ bootstrapServers: broker.bootstrap });
  await p.close();
  await assert.rejects(() => p.send({ topic: 'x', value: null }), KafkaClientError);
});
