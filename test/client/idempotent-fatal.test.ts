// An idempotent producer without transactional.id after a Produce answer that Kafka's producer cannot go on from,
// against an in-process broker whose Produce answers the test chooses (real TCP). Kafka 3.9 gives an idempotent
// producer a TransactionManager too: a batch failed with CLUSTER_AUTHORIZATION_FAILED,
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, PRODUCER_FENCED or UNSUPPORTED_VERSION puts it in FATAL_ERROR
// (maybeTransitionToErrorState, through Sender.failBatch and handleFailedBatch); the Sender then aborts every
// incomplete batch with that error, in flight or not (runOnce, maybeAbortBatches), sends nothing more, and every
// later send() fails with it (maybeAddPartition, maybeFailWithError). Other errors fail only their batch. Without
// idempotence there is no TransactionManager: no error is fatal.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ProduceRequest, ProduceResponse } from '../../src/protocol/messages/00-produce.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { batchesOf, produceAnswer, until } from '../helpers/produce-proxy.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'idempotent-fatal';

/** The rejection of a record with Kafka error `code`. */
function withCode(code: number): (e: Error) => boolean {
  return (e) => {
    assert.ok(e instanceof KafkaProtocolError, `failed with ${e}`);
    assert.equal(e.code, code, e.message);
    return true;
  };
}

describe('an idempotent producer’s fatal Produce errors', () => {
  let broker: InProcessBroker;
  /** Answers a Produce request instead of the broker (undefined: the broker handles it). */
  let onProduce: (request: ProduceRequest) => unknown = () => undefined;
  /** Changes the broker's Metadata answers. */
  let onMetadata: (response: MetadataResponse) => void = () => {};
  /** Produce requests that reached the broker (answered by the test or not). */
  let produceRequests = 0;
  const open: Producer[] = [];

  before(async () => {
    broker = await startInProcessBroker();
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.METADATA) {
        return request.handle().then((response) => {
          onMetadata(response as MetadataResponse);
          return response;
        });
      }
      if (request.apiKey !== ApiKey.PRODUCE) return undefined;
      produceRequests++;
      return onProduce(request.body as ProduceRequest);
    });
    const wire = await WireClient.connect(broker.host, broker.port);
    try {
      await createTopic(wire, TOPIC, { numPartitions: 2, replicationFactor: 1 });
    } finally {
      wire.close();
    }
  });

  after(async () => {
    for (const p of open) await p.close().catch(() => {});
    await broker.stop();
  });

  function reset(): void {
    onProduce = () => undefined;
    onMetadata = () => {};
    produceRequests = 0;
  }

  async function producer(extra: Record<string, unknown> = {}): Promise<Producer> {
    const p = new Producer({ bootstrapServers: `127.0.0.1:${broker.port}`, lingerMs: 0, ...extra });
    open.push(p);
    await p.connect();
    return p;
  }

  const send = (p: Producer, value: string, partition = 0) =>
    p.send({ topic: TOPIC, partition, value: Buffer.from(value) });

  for (const [name, code] of [
    ['CLUSTER_AUTHORIZATION_FAILED', ErrorCode.CLUSTER_AUTHORIZATION_FAILED],
    ['TRANSACTIONAL_ID_AUTHORIZATION_FAILED', ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED],
    ['PRODUCER_FENCED', ErrorCode.PRODUCER_FENCED],
    ['UNSUPPORTED_VERSION', ErrorCode.UNSUPPORTED_VERSION],
  ] as const) {
    it(`${name} makes it fatal: later sends fail with it and nothing more is sent`, async () => {
      reset();
      const p = await producer();
      await send(p, 'before');
      onProduce = (request) => produceAnswer(request, code);
      await assert.rejects(send(p, 'refused'), withCode(code));
      const requests = produceRequests;
      onProduce = () => undefined;
      await assert.rejects(send(p, 'after'), withCode(code));
      await assert.rejects(send(p, 'after', 1), withCode(code));
      await assert.rejects(p.sendBatch([{ topic: TOPIC, value: Buffer.from('batch') }]), withCode(code));
      await p.flush();
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(produceRequests, requests, 'no Produce request after the fatal error');
    });
  }

  it('the authorization failures say what Kafka’s Sender.failBatch says', async () => {
    reset();
    const p = await producer();
    onProduce = (request) => produceAnswer(request, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    await assert.rejects(send(p, 'refused'), (e: Error) => {
      assert.equal(e.message, `TOPIC_AUTHORIZATION_FAILED: Not authorized to access topics: [${TOPIC}]`);
      return true;
    });
    onProduce = (request) => produceAnswer(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    await assert.rejects(send(p, 'refused'), (e: Error) => {
      assert.equal(
        e.message,
        'CLUSTER_AUTHORIZATION_FAILED: The producer is not authorized to do idempotent sends',
      );
      return true;
    });
  });

  for (const [name, code] of [
    ['TOPIC_AUTHORIZATION_FAILED', ErrorCode.TOPIC_AUTHORIZATION_FAILED],
    ['INVALID_RECORD', ErrorCode.INVALID_RECORD],
  ] as const) {
    it(`${name} fails only its batch: the producer goes on`, async () => {
      reset();
      const p = await producer();
      onProduce = (request) => produceAnswer(request, code);
      await assert.rejects(send(p, 'refused'), withCode(code));
      onProduce = () => undefined;
      const written = await send(p, 'next');
      assert.ok(written.offset >= 0);
    });
  }

  it('without idempotence CLUSTER_AUTHORIZATION_FAILED fails only its batch (Kafka has no TransactionManager then)', async () => {
    reset();
    const p = await producer({ idempotent: false, acks: 1 });
    onProduce = (request) => produceAnswer(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    await assert.rejects(send(p, 'refused'), withCode(ErrorCode.CLUSTER_AUTHORIZATION_FAILED));
    onProduce = () => undefined;
    const written = await send(p, 'next');
    assert.ok(written.offset >= 0);
  });

  it('the fatal error fails the batches in flight and unsent at once; a late answer changes nothing', async () => {
    reset();
    // Partition 1 is led by a "broker 1" at the same address: the client opens a connection of its own to it, so
    // its answer does not wait behind partition 0's held one (a connection's answers come in order).
    onMetadata = (response) => {
      const self = response.brokers.find((b) => b.nodeId === 0)!;
      if (!response.brokers.some((b) => b.nodeId === 1)) response.brokers.push({ ...self, nodeId: 1 });
      for (const t of response.topics)
        if (t.name === TOPIC) for (const q of t.partitions) if (q.partitionIndex === 1) q.leaderId = 1;
    };
    // One batch in flight per partition: partition 0's next record waits, unsent, behind the held one.
    const p = await producer({ maxInFlightRequestsPerConnection: 1 });
    await p.cluster.refreshMetadata([TOPIC]);
    await send(p, 'p1-first', 1);
    let release: ((answer: ProduceResponse) => void) | null = null;
    let held: ProduceRequest | null = null;
    onProduce = (request) => {
      const partitions = batchesOf(request).map((b) => b.partition);
      if (held === null && partitions.includes(0)) {
        held = request;
        return new Promise<ProduceResponse>((resolve) => (release = resolve));
      }
      return partitions.includes(1)
        ? produceAnswer(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        : undefined;
    };
    const outcomes: Record<string, 'pending' | 'written' | Error> = {
      inFlight: 'pending',
      unsent: 'pending',
    };
    const watch = (name: string, sent: Promise<unknown>) =>
      sent.then(
        () => (outcomes[name] = 'written'),
        (e: Error) => (outcomes[name] = e),
      );
    watch('inFlight', send(p, 'in-flight', 0));
    await until('the partition 0 batch held', () => held !== null);
    watch('unsent', send(p, 'unsent', 0));
    await assert.rejects(send(p, 'refused', 1), withCode(ErrorCode.CLUSTER_AUTHORIZATION_FAILED));
    await until(
      'the in-flight and unsent records failed before the held answer came',
      () => outcomes.inFlight !== 'pending' && outcomes.unsent !== 'pending',
      2000,
    );
    for (const name of ['inFlight', 'unsent']) {
      const failed = outcomes[name] as Error;
      assert.ok(failed instanceof KafkaProtocolError, `${name} failed with ${failed}`);
      assert.equal(failed.code, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, `${name}: ${failed.message}`);
    }
    // flush() waits for no batch any more: each has its outcome.
    await p.flush();
    const inFlightFailure = outcomes.inFlight;
    // The broker's answer, a success, arrives after the abort: ignored.
    release!(produceAnswer(held!, ErrorCode.NONE, 7n));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(outcomes.inFlight, inFlightFailure, 'the late success does not change the outcome');
    await assert.rejects(send(p, 'after', 0), withCode(ErrorCode.CLUSTER_AUTHORIZATION_FAILED));
  });
});
