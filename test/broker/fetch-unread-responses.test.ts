// A client that pipelines Fetch requests and never reads its socket must not make the broker build and hold every
// response: Kafka's processor mutes a channel while one of its requests is in flight (SocketServer.scala), so it
// holds one response per connection. Brook pipelines other requests, but takes the next Fetch of a connection only
// once the previous one's response has been handed to the socket and the socket has drained. Here a partition
// holds about 4 MiB, a client sends 20 Fetch requests for all of it in one write and does not read: the broker
// dispatches a few of them (the kernel's socket buffers take a response or two) and holds about one response.
// When the client reads, all 20 arrive complete, in request order. Real TCP against an in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SocketServer } from '../../src/network/socket-server.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, onKey, startInProcessBroker } from '../helpers/in-process-broker.js';
import {
  consumerFetchBody,
  createTopic,
  fetchPartition,
  produceBatch,
  WireClient,
} from '../helpers/wire-client.js';

const TOPIC = 'fetch-unread-responses';
const BATCHES = 5;
const VALUE_BYTES = 800 * 1024;
const FETCHES = 20;

describe('fetches of a client that does not read', () => {
  let broker: InProcessBroker | undefined;
  let producer: WireClient | undefined;
  let consumer: WireClient | undefined;

  before(async () => {
    broker = await startInProcessBroker();
    producer = await WireClient.connect(broker.host, broker.port);
    consumer = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    producer?.close();
    consumer?.close();
    await broker?.stop();
  });

  it('are taken one at a time, so the broker holds about one response, and all are answered in order', async () => {
    await createTopic(producer!, TOPIC, { numPartitions: 1 });
    for (let i = 0; i < BATCHES; i++) {
      const batch = buildBatch([{ value: Buffer.alloc(VALUE_BYTES, 97 + i) }]);
      assert.equal((await produceBatch(producer!, TOPIC, batch, 1, 0)).errorCode, ErrorCode.NONE);
    }
    const partition = { ...fetchPartition(0, 0), partitionMaxBytes: 16 << 20 };
    const body = { ...consumerFetchBody([{ topic: TOPIC, partitions: [partition] }]), maxBytes: 50 << 20 };
    const responseBytes = BATCHES * VALUE_BYTES;

    let dispatched = 0;
    broker!.interception.set(
      onKey(ApiKey.FETCH, () => {
        dispatched++;
        return undefined;
      }),
    );
    const server = (broker!.broker as unknown as { server: SocketServer }).server;
    const socket = consumer!.raw.socket;
    consumer!.raw.setReading(false);
    socket.cork();
    for (let i = 0; i < FETCHES; i++) consumer!.send(ApiKey.FETCH, 12, body);
    socket.uncork();

    // Sample until the broker has stopped taking fetches for a while.
    let peakQueued = 0;
    let last = -1;
    let stalledSince = Date.now();
    while (Date.now() - stalledSince < 500) {
      peakQueued = Math.max(peakQueued, server.bytesQueued());
      if (dispatched !== last) {
        last = dispatched;
        stalledSince = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // One response in the broker, the rest of what was taken in the kernel's buffers (a few MiB on loopback).
    assert.ok(
      dispatched <= 5,
      `${dispatched} of ${FETCHES} fetches dispatched while the client does not read`,
    );
    assert.ok(peakQueued < 2 * responseBytes, `peak queued ${peakQueued}, one response is ${responseBytes}`);

    consumer!.raw.setReading(true);
    for (let i = 0; i < FETCHES; i++) {
      const response = await consumer!.receive();
      assert.equal(response.errorCode, ErrorCode.NONE);
      const answered = response.responses[0].partitions[0];
      assert.equal(answered.errorCode, ErrorCode.NONE);
      assert.ok(answered.records.length >= responseBytes, `fetch ${i} has all the partition's records`);
    }
    assert.equal(dispatched, FETCHES);
  });
});
