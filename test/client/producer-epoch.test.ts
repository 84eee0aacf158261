// The idempotent producer after a batch fails for good, against a real broker behind a proxy that holds chosen
// Produce requests and answers them itself (test/helpers/produce-proxy.ts). A failed batch leaves a gap in its
// partition's sequences, so the producer moves to a new epoch (KIP-360). Other partitions may still have batches of
// the old epoch in flight: none of their new batches may go under the new epoch before those are back, and a
// retried old-epoch batch keeps its epoch and sequence, so that it is neither written behind newer records nor
// written twice.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { type ProduceProxy, until, withProxiedTopic } from '../helpers/produce-proxy.js';
import { readPartition, type WireClient } from '../helpers/wire-client.js';

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
): Promise<{ proxy: ProduceProxy; logs: string[][]; offsets: Record<string, number> }> {
  return withProxiedTopic(topic, 2, async ({ proxy, wire, closing }) => {
    const producer = closing(
      new Producer({
        bootstrapServers: `127.0.0.1:${proxy.port}`,
        lingerMs: 5,
        // Held requests are answered by the test, never timed out.
        requestTimeoutMs: 60_000,
        retryBackoffMs: 20,
        retryBackoffMaxMs: 100,
      }),
    );
    const p = producer;
    // A request answered after its batch's delivery timeout, without waiting for the request timeout that the
    // options require delivery.timeout.ms to exceed: in use, a batch that waited before it was sent.
    (p as unknown as { settings: { deliveryTimeoutMs: number } }).settings.deliveryTimeoutMs =
      DELIVERY_TIMEOUT_MS;
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
  });
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
  const topic = 'epoch-exhausted';
  await withProxiedTopic(topic, 1, async ({ proxy, wire, closing }) => {
    const producer = closing(new Producer({ bootstrapServers: `127.0.0.1:${proxy.port}`, lingerMs: 5 }));
    const p = producer;
    await p.connect();
    await p.cluster.refreshMetadata([topic]);
    (p as unknown as { sender: { producerEpoch: number } }).sender.producerEpoch = 0x7fff;
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
  });
});

test('UNKNOWN_PRODUCER_ID: the batch goes again from sequence 0 under the next epoch', async () => {
  const topic = 'epoch-unknown-producer';
  await withProxiedTopic(topic, 1, async ({ proxy, wire, closing }) => {
    const producer = closing(
      new Producer({
        bootstrapServers: `127.0.0.1:${proxy.port}`,
        lingerMs: 5,
        retryBackoffMs: 20,
        retryBackoffMaxMs: 100,
      }),
    );
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
  });
});
