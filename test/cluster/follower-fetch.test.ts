// Follower fetching (KIP-392) in a real three-broker cluster, one broker a rack (a, b, c), each with Kafka's
// RackAwareReplicaSelector: the rack-a leader sends a consumer of another rack to the in-sync follower there
// (preferred_read_replica, no records, answered at once); that follower serves it up to its high watermark; the
// brokers' bytes-out counters (metrics endpoint) show who served the records. A stopped follower leaves the ISR
// and its consumers fall back to the leader and keep reading.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { run } from '../helpers/broker-process.js';
import { agreedLeader, controllerOf, produceToLeader, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { fetchBody, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';
import { scrape } from '../metrics/scrape.js';

const TOPIC = 'racks';
const RACKS = ['a', 'b', 'c'];
const SELECTOR = 'org.apache.kafka.common.replica.RackAwareReplicaSelector';
const FIRST = 20;
const BYTES_OUT = 'kafka_server_brokertopicmetrics_bytesout_total';

async function fetchAt(
  cluster: TestCluster,
  id: number,
  version: number,
  offset: number,
  rackId: string,
  maxWaitMs = 0,
  // biome-ignore lint/suspicious/noExplicitAny: decoded Fetch responses are read field by field, as in wire-client.
): Promise<any> {
  const b = cluster.brokers[id]!;
  const client = await WireClient.connect(b.host, b.port);
  try {
    const response = await client.call(ApiKey.FETCH, version, {
      ...fetchBody(TOPIC, 0, offset, maxWaitMs),
      rackId,
    });
    return response.responses[0].partitions[0];
  } finally {
    client.close();
  }
}

describe('follower fetching across racks (KIP-392)', () => {
  let cluster: TestCluster | undefined;
  const metricsPorts: number[] = [];
  const bytesOut = async (id: number): Promise<number> =>
    (await scrape(metricsPorts[id]!)).get(BYTES_OUT, { topic: TOPIC }) ?? 0;

  before(async () => {
    for (let id = 0; id < 3; id++) metricsPorts.push(await freePort());
    cluster = await startCluster({
      // Broker 0 starts first and runs the controller: the ISR change that drops the stopped rack-b broker must
      // not wait for that broker's own ZooKeeper session to expire.
      order: [0, 1, 2],
      // A stopped follower leaves the ISR after 3 s rather than Kafka's 30 s.
      overrides: { 'replica.selector.class': SELECTOR, 'replica.lag.time.max.ms': 3000 },
      brokerOverrides: Object.fromEntries(
        RACKS.map((rack, id) => [
          id,
          { 'broker.rack': rack, 'brook.metrics.listener': `http://127.0.0.1:${metricsPorts[id]}` },
        ]),
      ),
    });
    await createTopicOn(cluster.brokers[0]!, TOPIC, { assignments: { 0: [0, 1, 2] } });
    await agreedLeader(cluster.brokers, TOPIC, (v) => v.leaderId === 0 && v.isrNodes.length === 3);
    assert.equal(await controllerOf(cluster.brokers[1]!), 0);
    const codes = await produceValues(
      cluster.brokers[0]!,
      TOPIC,
      Array.from({ length: FIRST }, (_, i) => `v${i}`),
    );
    assert.deepEqual(new Set(codes), new Set([ErrorCode.NONE]));
  });
  after(() => cluster?.stop());

  it('the leader points a consumer of another rack to the follower there, and that follower serves it', async () => {
    const c = cluster!;
    const toB = await fetchAt(c, 0, 12, 0, 'b');
    assert.equal(toB.errorCode, ErrorCode.NONE);
    assert.equal(toB.preferredReadReplica, 1);
    assert.equal(toB.records.length, 0, 'no records with a pointer elsewhere');
    assert.equal(Number(toB.highWatermark), FIRST);
    // A pointer is answered at once, not after max.wait.ms.
    const started = Date.now();
    const waiting = await fetchAt(c, 0, 12, FIRST, 'c', 5000);
    assert.equal(waiting.preferredReadReplica, 2);
    assert.ok(Date.now() - started < 2500, `answered after ${Date.now() - started} ms`);
    for (const rack of ['a', '', 'nowhere']) {
      const own = await fetchAt(c, 0, 12, 0, rack);
      assert.equal(own.preferredReadReplica, -1, `rack '${rack}'`);
      assert.ok(own.records.length > 0, `rack '${rack}' reads from the leader`);
    }
    // Before v11 a consumer carries no rack and may read only from the leader.
    const old = await fetchAt(c, 0, 10, 0, '');
    assert.ok(old.records.length > 0);
    // The followers: up to their high watermark (the leader's, from its fetch responses) for v11+ consumers.
    const fromC = await waitFor('the rack-c follower to reach the high watermark', async () => {
      const p = await fetchAt(c, 2, 12, 0, 'c');
      return p.errorCode === ErrorCode.NONE && Number(p.highWatermark) === FIRST ? p : undefined;
    });
    assert.ok(fromC.records.length > 0);
    assert.equal(fromC.preferredReadReplica, -1);
    assert.equal((await fetchAt(c, 2, 10, 0, '')).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal((await fetchAt(c, 1, 12, FIRST + 100, 'b')).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  });

  it('kcat with client.rack=c reads every record from the rack-c follower', async () => {
    const c = cluster!;
    const before2 = await bytesOut(2);
    const kcat = await run(
      'kcat',
      [
        '-C',
        '-b',
        c.brokers[0]!.bootstrap,
        '-t',
        TOPIC,
        '-p',
        '0',
        '-o',
        'beginning',
        '-c',
        String(FIRST),
        '-e',
        '-q',
        '-X',
        'client.rack=c',
      ],
      { timeoutMs: 30_000 },
    );
    assert.equal(kcat.code, 0, kcat.stderr);
    assert.deepEqual(
      kcat.stdout.trim().split('\n'),
      Array.from({ length: FIRST }, (_, i) => `v${i}`),
    );
    assert.ok((await bytesOut(2)) > before2, 'broker 2 (rack c) sent the records');
  });

  it("a client.rack=b consumer reads from rack b's follower, then from the leader once that follower stops", async () => {
    const c = cluster!;
    const leaderBefore = await bytesOut(0);
    const consumer = new Consumer({
      bootstrapServers: c.brokers[0]!.bootstrap,
      clientRack: 'b',
      autoOffsetReset: 'earliest',
      requestTimeoutMs: 3000,
      fetchMaxWaitMs: 200,
    });
    const values: string[] = [];
    const readUntil = async (count: number, timeoutMs: number): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (values.length < count && Date.now() < deadline)
        for (const r of await consumer.poll(500)) values.push(r.value!.toString());
    };
    try {
      consumer.assign([{ topic: TOPIC, partition: 0 }]);
      await readUntil(FIRST, 20_000);
      assert.deepEqual(
        values,
        Array.from({ length: FIRST }, (_, i) => `v${i}`),
      );
      assert.ok((await bytesOut(1)) > 0, 'broker 1 (rack b) served the records');
      assert.equal(await bytesOut(0), leaderBefore, 'the leader sent the rack-b consumer no records');

      process.kill(c.brokers[1]!.pid, 'SIGSTOP');
      // acks=all waits for the ISR to drop the stopped follower (replica.lag.time.max.ms).
      const more = Array.from({ length: 10 }, (_, i) => `w${i}`);
      const codes = await produceToLeader([c.brokers[0]!, c.brokers[2]!], TOPIC, more, 30_000);
      assert.deepEqual(new Set(codes), new Set([ErrorCode.NONE]));
      await readUntil(FIRST + more.length, 40_000);
      assert.deepEqual(values.slice(FIRST), more);
      assert.ok((await bytesOut(0)) > leaderBefore, 'the leader served the records after the fallback');
    } finally {
      process.kill(c.brokers[1]!.pid, 'SIGCONT');
      await consumer.close();
    }
  });
});
