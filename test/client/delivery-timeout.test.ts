// delivery.timeout.ms (KIP-91) and sequence gaps, against a real broker process, some behind the proxy of
// test/helpers/produce-proxy.ts. A record's send fails with DeliveryTimeoutError once delivery.timeout.ms has
// passed since its batch was created, whether or not the batch ever left: batches waiting for a leader, or for a
// broker that is down, expire from the producer's queue, and other partitions carry on meanwhile. The option must
// be at least linger.ms + request.timeout.ms. An idempotent batch that expires after it was sent bumps the epoch;
// OUT_OF_ORDER_SEQUENCE_NUMBER for the batch right after the last acknowledged one (the broker lost records) bumps
// it at once and the batch goes again from sequence 0 of the new epoch, as Kafka's producer does.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, DeliveryTimeoutError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { withProxiedTopic } from '../helpers/produce-proxy.js';
import { createTopic, readPartition, WireClient } from '../helpers/wire-client.js';

const LINGER_MS = 5;
const REQUEST_TIMEOUT_MS = 1_000;
const DELIVERY_TIMEOUT_MS = 1_500;
/** How much earlier than its deadline a timer may fire by Date.now(); how much later the test accepts. */
const EARLY_MS = 20;
const LATE_MS = 1_500;

function newProducer(port: number, extra: Record<string, number> = {}): Producer {
  return new Producer({
    bootstrapServers: `127.0.0.1:${port}`,
    lingerMs: LINGER_MS,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    deliveryTimeoutMs: DELIVERY_TIMEOUT_MS,
    connectionTimeoutMs: 500,
    retryBackoffMs: 20,
    retryBackoffMaxMs: 100,
    ...extra,
  });
}

/** The send's outcome and when it came, or 'none' if it had none within `ms`. */
async function outcome(
  sent: Promise<unknown>,
  started: number,
  ms: number,
): Promise<{ error: Error | null; elapsed: number } | 'none'> {
  const settled = sent.then(
    () => ({ error: null, elapsed: Date.now() - started }),
    (error: Error) => ({ error, elapsed: Date.now() - started }),
  );
  const timer = sleep(ms).then(() => 'none' as const);
  return Promise.race([settled, timer]);
}

/** The send failed with a delivery timeout, no earlier than delivery.timeout.ms after it was made. */
function assertExpired(
  result: { error: Error | null; elapsed: number } | 'none',
  topicPartition: string,
): void {
  assert.notEqual(result, 'none', 'the send had no outcome long after delivery.timeout.ms');
  const { error, elapsed } = result as { error: Error | null; elapsed: number };
  assert.ok(error instanceof DeliveryTimeoutError, `not a delivery timeout: ${error}`);
  assert.match(
    error.message,
    new RegExp(`^Expiring 1 record\\(s\\) for ${topicPartition}:\\d+ ms has passed since batch creation`),
  );
  assert.equal(error.retriable, false);
  assert.ok(
    elapsed >= LINGER_MS + REQUEST_TIMEOUT_MS,
    `failed after ${elapsed} ms, before linger + request timeout`,
  );
  assert.ok(
    elapsed >= DELIVERY_TIMEOUT_MS - EARLY_MS,
    `failed after ${elapsed} ms, before delivery.timeout.ms`,
  );
  assert.ok(elapsed < DELIVERY_TIMEOUT_MS + LATE_MS, `failed only after ${elapsed} ms`);
}

async function values(wire: WireClient, topic: string, partition: number): Promise<string[]> {
  return (await readPartition(wire, topic, partition)).map((r) => r.value!.toString());
}

test('delivery.timeout.ms must be at least linger.ms + request.timeout.ms, as Kafka requires', async () => {
  const base = { bootstrapServers: '127.0.0.1:9', lingerMs: 100, requestTimeoutMs: 1_000 };
  assert.throws(
    () => new Producer({ ...base, deliveryTimeoutMs: 1_099 }),
    (e: Error) =>
      e instanceof ConfigError &&
      e instanceof TypeError &&
      /delivery\.timeout\.ms \(1099\) should be equal to or larger than linger\.ms \+ request\.timeout\.ms/.test(
        e.message,
      ),
  );
  const deliveryTimeout = (p: Producer) =>
    (p as unknown as { settings: { deliveryTimeoutMs: number } }).settings.deliveryTimeoutMs;
  const exact = new Producer({ ...base, deliveryTimeoutMs: 1_100 });
  assert.equal(deliveryTimeout(exact), 1_100);
  await exact.close(0);
  // Not given: the default (120000), raised to the sum when that is larger, as Kafka does.
  const byDefault = new Producer({ ...base });
  assert.equal(deliveryTimeout(byDefault), 120_000);
  await byDefault.close(0);
  const raised = new Producer({ ...base, requestTimeoutMs: 200_000 });
  assert.equal(deliveryTimeout(raised), 200_100);
  await raised.close(0);
});

test('with its only broker stopped, a send fails at delivery.timeout.ms, retried with backoff meanwhile', async () => {
  let broker: BrokerProcess | null = null;
  let producer: Producer | null = null;
  let wire: WireClient | null = null;
  const topic = 'expiry-down';
  try {
    broker = await startBroker();
    wire = await WireClient.connect(broker.host, broker.port);
    await createTopic(wire, topic, { numPartitions: 1 });
    wire.close();
    wire = null;
    producer = newProducer(broker.port);
    assert.equal((await producer.send({ topic, value: Buffer.from('before') })).offset, 0);
    // Produce requests tried from now on.
    let produces = 0;
    const cluster = producer.cluster;
    const send = cluster.send.bind(cluster);
    cluster.send = ((nodeId: number, apiKey: number, ...rest: [unknown, never]) => {
      if (apiKey === ApiKey.PRODUCE) produces++;
      return send(nodeId, apiKey, ...rest);
    }) as typeof cluster.send;
    await broker.stop();
    const started = Date.now();
    const lost = producer.send({ topic, value: Buffer.from('lost') });
    assertExpired(await outcome(lost, started, DELIVERY_TIMEOUT_MS * 4), `${topic}-0`);
    // Each retry waited out retry.backoff.ms (20 ms doubling up to 100 ms): some 20 tries in 1.5 s, not thousands.
    assert.ok(produces >= 2 && produces <= 40, `${produces} produce attempts`);
  } finally {
    await producer?.close(0);
    wire?.close();
    await broker?.stop();
  }
});

test('a batch for a partition without a leader expires; another partition carries on meanwhile', async () => {
  const topic = 'expiry-leaderless';
  await withProxiedTopic(topic, 2, async ({ proxy, wire, closing }) => {
    proxy.hideLeader(topic, 1);
    const producer = closing(newProducer(proxy.port));
    const p = producer;
    const send = (partition: number, value: string) =>
      p.send({ topic, partition, value: Buffer.from(value) });
    await p.connect();
    await p.cluster.refreshMetadata([topic]);
    assert.equal(p.cluster.leaderOf(topic, 1), -1);

    const started = Date.now();
    const lost = outcome(send(1, 'lost'), started, DELIVERY_TIMEOUT_MS * 4);
    // Partition 0 goes on while partition 1's batch waits: each send is answered at once.
    const offsets: number[] = [];
    for (const value of ['a', 'b', 'c']) {
      const t = Date.now();
      offsets.push((await send(0, value)).offset);
      assert.ok(Date.now() - t < 500, `a send to the live partition took ${Date.now() - t} ms`);
      await sleep(300);
    }
    assert.deepEqual(offsets, [0, 1, 2]);
    assertExpired(await lost, `${topic}-1`);

    // The expired batch was never numbered: no epoch bump, partition 0's sequences go on.
    assert.equal((await send(0, 'd')).offset, 3);
    const p0 = proxy.forwarded.filter((b) => b.partition === 0);
    assert.deepEqual(
      p0.map((b) => [b.values.join(), b.epoch, b.baseSequence]),
      [
        ['a', p0[0]!.epoch, 0],
        ['b', p0[0]!.epoch, 1],
        ['c', p0[0]!.epoch, 2],
        ['d', p0[0]!.epoch, 3],
      ],
    );
    assert.equal(
      proxy.forwarded.some((b) => b.partition === 1),
      false,
    );

    // Once the leader is known again, the partition takes records.
    proxy.hideLeader(topic, 1, false);
    assert.equal((await send(1, 'back')).offset, 0);
    assert.deepEqual(await values(wire, topic, 0), ['a', 'b', 'c', 'd']);
    assert.deepEqual(await values(wire, topic, 1), ['back']);
  });
});

test('a sent batch that expires while waiting to be retried bumps the epoch', async () => {
  const topic = 'expiry-retry';
  await withProxiedTopic(topic, 1, async ({ proxy, wire, closing }) => {
    const producer = closing(newProducer(proxy.port));
    const p = producer;
    await p.connect();
    await p.cluster.refreshMetadata([topic]);
    assert.equal((await p.send({ topic, value: Buffer.from('first') })).offset, 0);

    // `lost` is sent (sequence 1) but not forwarded; its answer is a retriable error, and by then the partition
    // has no leader: the batch waits in the queue, numbered, until it expires.
    const held = proxy.holdNext(0, false);
    const started = Date.now();
    const lost = outcome(p.send({ topic, value: Buffer.from('lost') }), started, DELIVERY_TIMEOUT_MS * 4);
    await held.caught;
    proxy.hideLeader(topic, 0);
    await p.cluster.refreshMetadata([topic]);
    held.answer(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assertExpired(await lost, `${topic}-0`);

    proxy.hideLeader(topic, 0, false);
    assert.equal((await p.send({ topic, value: Buffer.from('after') })).offset, 1);
    const [first, after] = [proxy.forwarded[0]!, proxy.forwarded.at(-1)!];
    assert.deepEqual([first.values, first.baseSequence], [['first'], 0]);
    // The next batch goes under the next epoch of the same producer id, from sequence 0.
    assert.deepEqual(
      [after.values, after.producerId, after.epoch, after.baseSequence],
      [['after'], first.producerId, first.epoch + 1, 0],
    );
    assert.deepEqual(await values(wire, topic, 0), ['first', 'after']);
  });
});

test('OUT_OF_ORDER_SEQUENCE_NUMBER after the last acknowledged batch bumps the epoch at once: no retry until the timeout', async () => {
  const topic = 'sequence-gap';
  const deliveryTimeoutMs = 10_000;
  await withProxiedTopic(topic, 1, async ({ proxy, wire, closing }) => {
    const producer = closing(newProducer(proxy.port, { deliveryTimeoutMs, requestTimeoutMs: 5_000 }));
    const p = producer;
    await p.connect();
    await p.cluster.refreshMetadata([topic]);
    assert.equal((await p.send({ topic, value: Buffer.from('first') })).offset, 0);

    // `second` (sequence 1) is acknowledged, but the broker never has it: as if it lost it.
    const held = proxy.holdNext(0, false);
    const second = p.send({ topic, value: Buffer.from('second') });
    await held.caught;
    held.answer(0, 1n);
    assert.equal((await second).offset, 1);

    // `third` (sequence 2) follows the last acknowledged sequence: the broker's refusal is a real gap.
    const started = Date.now();
    const third = await outcome(
      p.send({ topic, value: Buffer.from('third') }),
      started,
      deliveryTimeoutMs * 2,
    );
    assert.notEqual(third, 'none');
    const { error, elapsed } = third as { error: Error | null; elapsed: number };
    assert.equal(error, null, `third failed: ${error?.message}`);
    assert.ok(elapsed < 2_000, `third took ${elapsed} ms`);
    assert.equal((await p.send({ topic, value: Buffer.from('fourth') })).offset, 2);

    const first = proxy.forwarded[0]!;
    const of = (value: string) =>
      proxy.forwarded
        .filter((b) => b.values.includes(value))
        .map((b) => [b.producerId, b.epoch, b.baseSequence]);
    // Refused once under the first epoch, then at once from sequence 0 of the next one.
    assert.deepEqual(of('third'), [
      [first.producerId, first.epoch, 2],
      [first.producerId, first.epoch + 1, 0],
    ]);
    assert.deepEqual(of('fourth'), [[first.producerId, first.epoch + 1, 1]]);
    assert.deepEqual(await values(wire, topic, 0), ['first', 'third', 'fourth']);
  });
});
