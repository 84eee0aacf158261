// A fetch that Kafka's DelayedFetch rules call satisfied at its first check is answered from its first read, not
// parked and read again: here partition 1's batch is over its partition max bytes and not first in the response,
// so the read returns partition 0's 100 bytes only, under fetch.min.bytes, while DelayedFetch counts partition 1
// in full (up to its max bytes) and would complete the fetch at once. Before, the fetch entered the purgatory,
// completed there at once and read both partitions a second time. Partition 0's reads are counted on its log,
// through a real fetch over TCP against an in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerServices } from '../../src/broker/broker-services.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import {
  consumerFetchBody,
  createTopic,
  fetchPartition,
  produceBatch,
  WireClient,
} from '../helpers/wire-client.js';

const TOPIC = 'fetch-read-once';

describe('a fetch satisfied at its first check', () => {
  let broker: InProcessBroker | undefined;
  let client: WireClient | undefined;

  before(async () => {
    broker = await startInProcessBroker();
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('reads its partitions once', async () => {
    await createTopic(client!, TOPIC, { numPartitions: 2 });
    const small = buildBatch([{ value: Buffer.alloc(100, 97) }]);
    const big = buildBatch([{ value: Buffer.alloc(3000, 98) }]);
    assert.equal((await produceBatch(client!, TOPIC, small, 1, 0)).errorCode, ErrorCode.NONE);
    assert.equal((await produceBatch(client!, TOPIC, big, 1, 1)).errorCode, ErrorCode.NONE);

    const services = (broker!.broker as unknown as { services: BrokerServices }).services;
    const log = services.replicas.get(TOPIC, 0)!.log;
    let reads = 0;
    const startRead = log.startRead.bind(log);
    log.startRead = (...args: Parameters<typeof log.startRead>) => {
      reads++;
      return startRead(...args);
    };

    const p0 = { ...fetchPartition(0, 0), partitionMaxBytes: 1000 };
    const p1 = { ...fetchPartition(1, 0), partitionMaxBytes: 1000 };
    const body = consumerFetchBody([{ topic: TOPIC, partitions: [p0, p1] }], {
      maxWaitMs: 4000,
      minBytes: 500,
    });
    const response = await client!.call(ApiKey.FETCH, 12, body);
    assert.equal(response.errorCode, ErrorCode.NONE);
    const answered = response.responses[0].partitions;
    assert.equal(
      answered.find((p: { partitionIndex: number }) => p.partitionIndex === 0)?.records?.length,
      small.length,
    );
    assert.equal(reads, 1, 'partition 0 read once');
  });
});
