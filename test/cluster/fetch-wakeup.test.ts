// A consumer's fetch waiting at the end of a replicated partition is answered as soon as the high watermark moves
// past it, not when its max wait runs out. On a replicated partition the append alone does not make records
// visible to consumers: the followers' next fetches move the high watermark, and that is when Kafka completes the
// delayed fetches of the partition (Partition.maybeIncrementLeaderHW -> tryCompleteDelayedRequests). A broker
// that only looked again on appends left a consumer at the end of a quiet topic waiting for fetch.max.wait.ms
// after every write (500 ms with Kafka's consumer defaults).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { partitionView, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';
import { fetchBody, produceBatch, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'wakeup';
/** Far longer than the test waits for its answer: a fetch answered at its max wait fails the test. */
const FETCH_MAX_WAIT_MS = 30_000;

describe('a waiting consumer fetch on a replicated partition', () => {
  let cluster: TestCluster | undefined;
  before(async () => {
    cluster = await startCluster();
    await createTopicOn(cluster.brokers[0]!, TOPIC, { numPartitions: 1, replicationFactor: 3 });
  });
  after(() => cluster?.stop());

  it('is answered when the followers move the high watermark past it, not at its max wait', {
    timeout: 60_000,
  }, async () => {
    const brokers = cluster!.brokers;
    const view = await waitFor('a full ISR', async () => {
      const v = await partitionView(brokers[0]!, TOPIC);
      return v !== undefined && v.leaderId >= 0 && v.isrNodes.length === 3 ? v : undefined;
    });
    const leader = brokers[view.leaderId]!;
    const consumer = await WireClient.connect(leader.host, leader.port);
    const producer = await WireClient.connect(leader.host, leader.port);
    try {
      consumer.send(ApiKey.FETCH, 12, fetchBody(TOPIC, 0, 0, FETCH_MAX_WAIT_MS, 1));
      const answer = consumer.receive(FETCH_MAX_WAIT_MS + 10_000);
      await sleep(300); // the fetch finds nothing and waits in the fetch purgatory
      const sentAt = Date.now();
      const produced = await produceBatch(producer, TOPIC, buildBatch([{ value: 'woken' }]), 1);
      assert.equal(produced.errorCode, 0);
      const response = await answer;
      const waitedMs = Date.now() - sentAt;
      const data = response.responses[0].partitions[0];
      assert.equal(data.errorCode, 0);
      const values = readRecords(data.records, 0).map((r) => r.value?.toString());
      assert.deepEqual(values, ['woken'], 'the answer carries the record once it is replicated');
      assert.ok(
        waitedMs < FETCH_MAX_WAIT_MS / 2,
        `the fetch was answered ${waitedMs} ms after the write, as if at its max wait of ${FETCH_MAX_WAIT_MS} ms`,
      );
    } finally {
      consumer.close();
      producer.close();
    }
  });
});
