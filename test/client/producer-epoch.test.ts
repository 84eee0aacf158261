// The idempotent producer after a batch fails for good, against a real broker behind a proxy that holds chosen
// Produce requests and answers them itself. A failed batch leaves a gap in its partition's sequences, so the
// producer moves to a new epoch (KIP-360). Other partitions may still have batches of the old epoch in flight:
// none of their new batches may go under the new epoch before those are back, and a retried old-epoch batch keeps
// its epoch and sequence, so that it is neither written behind newer records nor written twice.
//
// The proxy here decodes Produce requests (partition, producer id, epoch, sequence, values of each batch) and can
// hold one without forwarding it (the broker never sees it) or forward it and withhold the broker's answer (the
// broker appended it); either way the test later answers it with an error code of its choosing.

import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { decodeRequestHeader, encodeResponseHeader } from '../../src/protocol/headers.js';
import type { ProduceRequest } from '../../src/protocol/messages/00-produce.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopic, readPartition, WireClient } from '../helpers/wire-client.js';

/** One batch of a Produce request that reached the broker, in the order they reached it. */
interface SeenBatch {
  partition: number;
  producerId: number;
  epoch: number;
  baseSequence: number;
  values: string[];
}

interface Held {
  /** Resolves once the request is held (and, for a forwarded one, once the broker has answered it). */
  caught: Promise<void>;
  /** Answers the held request with `errorCode` for each of its partitions. */
  answer(errorCode: number): void;
}

function batchesOf(request: ProduceRequest): SeenBatch[] {
  const out: SeenBatch[] = [];
  for (const t of request.topicData) {
    for (const p of t.partitionData) {
      const records = p.records!;
      out.push({
        partition: p.index,
        producerId: batchHeader.producerId(records, 0),
        epoch: batchHeader.producerEpoch(records, 0),
        baseSequence: batchHeader.baseSequence(records, 0),
        values: [...readRecords(records, 0)].map((r) => r.value!.toString()),
      });
    }
  }
  return out;
}

async function startProxy() {
  let upstreamPort = 0;
  /** Batches forwarded to the broker, in order. */
  const forwarded: SeenBatch[] = [];
  let hold: { partition: number; forward: boolean; onCaught: () => void; held: HeldRequest | null } | null =
    null;
  interface HeldRequest {
    client: net.Socket;
    version: number;
    correlationId: number;
    request: ProduceRequest;
  }
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    client.on('error', () => {});
    upstream.on('error', () => {});
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    /** Correlation ids whose broker answer is withheld, and what to do when it comes. */
    const withheld = new Map<number, () => void>();
    let fromClient = Buffer.alloc(0);
    client.on('data', (d: Buffer) => {
      fromClient = Buffer.concat([fromClient, d]);
      while (fromClient.length >= 4 && fromClient.length >= 4 + fromClient.readInt32BE(0)) {
        const frame = Buffer.from(fromClient.subarray(0, 4 + fromClient.readInt32BE(0)));
        fromClient = fromClient.subarray(frame.length);
        const r = new Reader(frame.subarray(4));
        const { header } = decodeRequestHeader(r);
        if (header.requestApiKey === ApiKey.PRODUCE) {
          const request = getApi(ApiKey.PRODUCE).decodeRequest(r, header.requestApiVersion) as ProduceRequest;
          const batches = batchesOf(request);
          const h = hold;
          if (h !== null && batches.some((b) => b.partition === h.partition)) {
            hold = null;
            h.held = {
              client,
              version: header.requestApiVersion,
              correlationId: header.correlationId,
              request,
            };
            if (!h.forward) {
              h.onCaught();
              continue;
            }
            withheld.set(header.correlationId, h.onCaught);
          }
          forwarded.push(...batches);
        }
        upstream.write(frame);
      }
    });
    let fromBroker = Buffer.alloc(0);
    upstream.on('data', (d: Buffer) => {
      fromBroker = Buffer.concat([fromBroker, d]);
      while (fromBroker.length >= 4 && fromBroker.length >= 4 + fromBroker.readInt32BE(0)) {
        const frame = fromBroker.subarray(0, 4 + fromBroker.readInt32BE(0));
        fromBroker = fromBroker.subarray(frame.length);
        const correlationId = frame.readInt32BE(4);
        const onWithheld = withheld.get(correlationId);
        if (onWithheld === undefined) {
          client.write(frame);
        } else {
          withheld.delete(correlationId);
          onWithheld();
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    forwarded,
    setUpstream(port: number): void {
      upstreamPort = port;
    },
    /**
     * Holds the next Produce request with a batch for `partition`: `forward` sends it on to the broker (which
     * appends it) but withholds the answer; otherwise the broker never sees it.
     */
    holdNext(partition: number, forward: boolean): Held {
      let onCaught!: () => void;
      const caught = new Promise<void>((r) => (onCaught = r));
      const h = { partition, forward, onCaught, held: null as HeldRequest | null };
      hold = h;
      return {
        caught,
        answer(errorCode: number): void {
          const held = h.held!;
          const w = new Writer();
          w.int32(0);
          encodeResponseHeader(w, ApiKey.PRODUCE, held.version, held.correlationId);
          getApi(ApiKey.PRODUCE).encodeResponse(w, held.version, {
            responses: held.request.topicData.map((t) => ({
              name: t.name,
              partitionResponses: t.partitionData.map((p) => ({
                index: p.index,
                errorCode,
                baseOffset: -1n,
                logAppendTimeMs: -1n,
                logStartOffset: -1n,
                recordErrors: [],
                errorMessage: null,
                currentLeader: { leaderId: -1, leaderEpoch: -1 },
              })),
            })),
            throttleTimeMs: 0,
            nodeEndpoints: [],
          });
          const out = w.toBuffer();
          out.writeInt32BE(out.length - 4, 0);
          held.client.write(out);
        },
      };
    },
    async close(): Promise<void> {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

type Proxy = Awaited<ReturnType<typeof startProxy>>;

async function brokerBehind(proxy: Proxy): Promise<BrokerProcess> {
  const broker = await startBroker({
    overrides: { 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxy.port}` },
  });
  proxy.setUpstream(broker.port);
  return broker;
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function values(wire: WireClient, topic: string, partition: number): Promise<string[]> {
  return (await readPartition(wire, topic, partition)).map((r) => r.value!.toString());
}

const DELIVERY_TIMEOUT_MS = 3_000;

/**
 * Partition 0's batch `a` is held until it has expired; meanwhile partition 0's next batch `a1` reaches the broker
 * (out of sequence behind the missing `a`, so it waits to be retried) and partition 1's batch `b1` is held. Once `a` has failed for good,
 * `b2` is sent to partition 1 and `a2` to partition 0, and only then is `b1` answered with `b1Error`.
 */
async function expiryWhileInFlight(
  topic: string,
  b1Forwarded: boolean,
  b1Error: number,
): Promise<{ proxy: Proxy; logs: string[][]; offsets: Record<string, number> }> {
  const proxy = await startProxy();
  let broker: BrokerProcess | null = null;
  let producer: Producer | null = null;
  let wire: WireClient | null = null;
  try {
    broker = await brokerBehind(proxy);
    wire = await WireClient.connect(broker.host, broker.port);
    await createTopic(wire, topic, { numPartitions: 2 });
    producer = new Producer({
      bootstrapServers: `127.0.0.1:${proxy.port}`,
      lingerMs: 5,
      deliveryTimeoutMs: DELIVERY_TIMEOUT_MS,
      // Held requests are answered by the test, never timed out.
      requestTimeoutMs: 60_000,
      retryBackoffMs: 20,
      retryBackoffMaxMs: 100,
    });
    const p = producer;
    const send = (partition: number, value: string) =>
      p.send({ topic, partition, value: Buffer.from(value) }).then((m) => m.offset);
    await p.connect();
    await p.cluster.refreshMetadata([topic]);
    // Both partitions know the producer: a batch that skips a sequence is refused as out of order.
    const offsets: Record<string, number> = {};
    offsets.p0 = await send(0, 'p0');
    offsets.p1 = await send(1, 'p1');

    const a = proxy.holdNext(0, false);
    const aSent = Date.now();
    const aResult = send(0, 'a').then(
      () => null,
      (e: Error) => e,
    );
    await a.caught;
    // Later sends are younger than a by half the delivery timeout: they are still in time when a has expired.
    await sleep(DELIVERY_TIMEOUT_MS / 2);
    const a1 = send(0, 'a1');
    await until('a1 at the broker', () => proxy.forwarded.some((x) => x.values.includes('a1')));
    const b1 = proxy.holdNext(1, b1Forwarded);
    const b1Sent = send(1, 'b1');
    await b1.caught;
    await sleep(Math.max(0, aSent + DELIVERY_TIMEOUT_MS + 100 - Date.now()));
    a.answer(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const aError = await aResult;
    assert.ok(aError !== null && /delivery.timeout.ms/.test(aError.message), `a: ${aError?.message}`);

    const b2 = send(1, 'b2');
    const a2 = send(0, 'a2');
    // Time enough for b2 to leave, if it may.
    await sleep(300);
    b1.answer(b1Error);
    [offsets.a1, offsets.b1, offsets.b2, offsets.a2] = await Promise.all([a1, b1Sent, b2, a2]);
    const logs = [await values(wire, topic, 0), await values(wire, topic, 1)];
    return { proxy, logs, offsets };
  } finally {
    await producer?.close(0);
    wire?.close();
    await broker?.stop();
    await proxy.close();
  }
}

test('a batch of another partition held when one expires is not written behind newer records', async () => {
  const { proxy, logs, offsets } = await expiryWhileInFlight(
    'epoch-lost',
    false,
    ErrorCode.NOT_LEADER_OR_FOLLOWER,
  );
  assert.deepEqual(logs[1], ['p1', 'b1', 'b2'], 'partition 1: each record once, in send order');
  assert.deepEqual(logs[0], ['p0', 'a1', 'a2'], 'partition 0: all but the expired record, in send order');
  assert.deepEqual([offsets.b1, offsets.b2, offsets.a1, offsets.a2], [1, 2, 1, 2]);

  const first = proxy.forwarded[0]!;
  const of = (value: string) => proxy.forwarded.filter((b) => b.values.includes(value));
  // b1 went again as it was first numbered, under the first epoch; b2 under the next epoch of the same id, from 0.
  assert.deepEqual(
    of('b1').map((b) => [b.partition, b.producerId, b.epoch, b.baseSequence]),
    [[1, first.producerId, first.epoch, 1]],
  );
  assert.deepEqual(
    of('b2').map((b) => [b.producerId, b.epoch, b.baseSequence]),
    [[first.producerId, first.epoch + 1, 0]],
  );
  // Nothing of partition 1 under the new epoch reached the broker before b1's retry.
  const p1 = proxy.forwarded.filter((b) => b.partition === 1);
  assert.deepEqual(
    p1.map((b) => b.values.join()),
    ['p1', 'b1', 'b2'],
  );
  // a1 was refused behind the missing a, tried once more under the old epoch after a expired (in case a had
  // landed), refused again, then numbered from 0 under the new epoch, ahead of a2.
  assert.deepEqual(
    of('a1').map((b) => [b.epoch, b.baseSequence]),
    [
      [first.epoch, 2],
      [first.epoch, 2],
      [first.epoch + 1, 0],
    ],
  );
  assert.deepEqual(
    of('a2').map((b) => [b.epoch, b.baseSequence]),
    [[first.epoch + 1, 1]],
  );
});

test('a batch of another partition that landed but was answered with an error is not written twice', async () => {
  const { logs, offsets } = await expiryWhileInFlight('epoch-landed', true, ErrorCode.REQUEST_TIMED_OUT);
  assert.deepEqual(logs[1], ['p1', 'b1', 'b2'], 'partition 1: each record once, in send order');
  assert.deepEqual(logs[0], ['p0', 'a1', 'a2']);
  // The retry of b1 was answered as a duplicate, with the offset it was first written at.
  assert.deepEqual([offsets.b1, offsets.b2], [1, 2]);
});

test('a failed batch at the last epoch moves the producer to a new producer id', async () => {
  const proxy = await startProxy();
  let broker: BrokerProcess | null = null;
  let producer: Producer | null = null;
  let wire: WireClient | null = null;
  const topic = 'epoch-exhausted';
  try {
    broker = await brokerBehind(proxy);
    wire = await WireClient.connect(broker.host, broker.port);
    await createTopic(wire, topic, { numPartitions: 1 });
    producer = new Producer({ bootstrapServers: `127.0.0.1:${proxy.port}`, lingerMs: 5 });
    const p = producer;
    await p.connect();
    await p.cluster.refreshMetadata([topic]);
    (p as unknown as { producerEpoch: number }).producerEpoch = 0x7fff;
    await p.send({ topic, value: Buffer.from('first') });
    const held = proxy.holdNext(0, false);
    const failed = p.send({ topic, value: Buffer.from('refused') }).then(
      () => null,
      (e: Error) => e,
    );
    await held.caught;
    held.answer(ErrorCode.INVALID_RECORD);
    assert.ok((await failed) !== null);
    await p.send({ topic, value: Buffer.from('after') });
    const [first, after] = [proxy.forwarded[0]!, proxy.forwarded.at(-1)!];
    assert.deepEqual([first.epoch, first.baseSequence], [0x7fff, 0]);
    assert.notEqual(after.producerId, first.producerId);
    assert.deepEqual([after.values, after.epoch, after.baseSequence], [['after'], 0, 0]);
    assert.deepEqual(await values(wire, topic, 0), ['first', 'after']);
  } finally {
    await producer?.close(0);
    wire?.close();
    await broker?.stop();
    await proxy.close();
  }
});

test('UNKNOWN_PRODUCER_ID: the batch goes again from sequence 0 under the next epoch', async () => {
  const proxy = await startProxy();
  let broker: BrokerProcess | null = null;
  let producer: Producer | null = null;
  let wire: WireClient | null = null;
  const topic = 'epoch-unknown-producer';
  try {
    broker = await brokerBehind(proxy);
    wire = await WireClient.connect(broker.host, broker.port);
    await createTopic(wire, topic, { numPartitions: 1 });
    producer = new Producer({
      bootstrapServers: `127.0.0.1:${proxy.port}`,
      lingerMs: 5,
      retryBackoffMs: 20,
      retryBackoffMaxMs: 100,
    });
    const p = producer;
    await p.connect();
    await p.cluster.refreshMetadata([topic]);
    await p.send({ topic, value: Buffer.from('first') });
    const held = proxy.holdNext(0, false);
    const sent = p.send({ topic, value: Buffer.from('second') });
    await held.caught;
    held.answer(ErrorCode.UNKNOWN_PRODUCER_ID);
    assert.equal((await sent).offset, 1);
    const [first, second] = proxy.forwarded;
    assert.equal(proxy.forwarded.length, 2);
    assert.deepEqual(
      [second!.values, second!.producerId, second!.epoch, second!.baseSequence],
      [['second'], first!.producerId, first!.epoch + 1, 0],
    );
    assert.deepEqual(await values(wire, topic, 0), ['first', 'second']);
  } finally {
    await producer?.close(0);
    wire?.close();
    await broker?.stop();
    await proxy.close();
  }
});
