// The replication round trip waits for nothing but the followers: with replica.fetch.wait.max.ms far longer than
// the test, an idle partition's followers sit in the leader's fetch purgatory when a write comes. The append must
// wake their parked fetches at once (Kafka completes delayed fetches when the log end moves), the followers'
// next fetches carry their new log end offsets, the high watermark moves, and that completes the acks=all write
// and a consumer's fetch parked at the end of the partition. A stage that waited for a timer instead (a parked
// follower fetch answered only at its max wait, a high watermark that moved without waking the purgatories)
// would hold every write for replica.fetch.wait.max.ms; the produce's own timeout (5 s) is shorter than that.
// Each write comes after the followers went idle again, so each one exercises the wake-ups, not a fetch that
// happened to be on its way.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { partitionView, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';
import { fetchBody, produceBatch, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'idle-followers';
/** replica.fetch.wait.max.ms: a parked follower fetch answered only at its max wait fails every write below. */
const REPLICA_FETCH_WAIT_MS = 20_000;
/** A consumer fetch answered at its max wait fails the test too. */
const CONSUMER_MAX_WAIT_MS = 30_000;
const WRITES = 4;
/** How long the followers are left alone before each write: their fetches are parked by then. */
const IDLE_MS = 300;

describe('acks=all on rf=3 with idle followers parked for replica.fetch.wait.max.ms', () => {
  let cluster: TestCluster | undefined;
  before(async () => {
    cluster = await startCluster({
      // replica.lag.time.max.ms (30 s) stays above the fetch wait, as Kafka requires.
      overrides: { 'replica.fetch.wait.max.ms': REPLICA_FETCH_WAIT_MS },
    });
    await createTopicOn(cluster.brokers[0]!, TOPIC, {
      numPartitions: 1,
      replicationFactor: 3,
      configs: { 'min.insync.replicas': '3' },
    });
  });
  after(() => cluster?.stop());

  it('answers each write and the waiting consumer as soon as both followers fetched it', {
    timeout: 90_000,
  }, async () => {
    const brokers = cluster!.brokers;
    const view = await waitFor('a full ISR', async () => {
      const v = await partitionView(brokers[0]!, TOPIC);
      return v !== undefined && v.leaderId >= 0 && v.isrNodes.length === 3 ? v : undefined;
    });
    const leader = brokers[view.leaderId]!;
    const producer = await WireClient.connect(leader.host, leader.port);
    const consumer = await WireClient.connect(leader.host, leader.port);
    try {
      for (let i = 0; i < WRITES; i++) {
        consumer.send(ApiKey.FETCH, 12, fetchBody(TOPIC, 0, i, CONSUMER_MAX_WAIT_MS, 1));
        const fetched = consumer.receive(CONSUMER_MAX_WAIT_MS + 10_000);
        // Awaited below; if an assertion fails first, closing the connection must not leave a stray rejection.
        fetched.catch(() => {});
        await sleep(IDLE_MS);
        const sentAt = performance.now();
        const produced = await produceBatch(producer, TOPIC, buildBatch([{ value: `write-${i}` }]), -1);
        const producedMs = performance.now() - sentAt;
        assert.equal(produced.errorCode, 0, `write ${i}: error ${produced.errorCode} after ${producedMs} ms`);
        assert.equal(Number(produced.baseOffset), i);
        const response = await fetched;
        const fetchedMs = performance.now() - sentAt;
        const data = response.responses[0].partitions[0];
        assert.equal(data.errorCode, 0);
        assert.deepEqual(
          readRecords(data.records, 0).map((r) => r.value?.toString()),
          [`write-${i}`],
        );
        // Generous for a loaded machine, and far under the waits a missed wake-up costs (20 s and 30 s).
        assert.ok(producedMs < 3000, `write ${i} answered after ${producedMs.toFixed(0)} ms`);
        assert.ok(fetchedMs < 3000, `the consumer got write ${i} after ${fetchedMs.toFixed(0)} ms`);
      }
    } finally {
      producer.close();
      consumer.close();
    }
  });
});
