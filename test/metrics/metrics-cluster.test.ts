// Metrics of a real three-broker cluster, scraped over HTTP from each broker's brook.metrics.listener: exactly
// one broker counts an active controller; when a follower is stopped (SIGSTOP) its leader reports the partition
// under-replicated and counts the ISR shrink; when it runs again it catches up, the ISR expands, the count goes
// back to 0 and the follower's fetcher lag and /readyz say it has caught up. A follower kept behind by a
// replication throttle after such a stop is not ready (/readyz 503 naming the partition) until it has caught up,
// and its partition (min.insync.replicas 2) counts at min ISR meanwhile. A partition whose only replica's
// broker stops counts as offline on the controller until that broker is back.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { agreedController, agreedLeader } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { sleep } from '../helpers/wait.js';
import { produceBatch, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';
import { httpRequest, type Samples, scrape } from './scrape.js';

const TOPIC = 'replicated';

async function eventually(check: () => Promise<void>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}

describe('metrics in a three-broker cluster', () => {
  let cluster: TestCluster | undefined;
  const ports: number[] = [];

  before(async () => {
    for (let id = 0; id < 3; id++) ports.push(await freePort());
    cluster = await startCluster({
      // Followers that stop fetching leave the ISR after 2 s rather than Kafka's 30 s. Replication of the
      // topics that list throttled replicas is capped at 1000 B/s for followers out of the ISR, a fetch taking
      // 8 KiB at most: such a follower takes minutes to catch up with a few hundred KiB.
      overrides: {
        'replica.lag.time.max.ms': 2000,
        'leader.replication.throttled.rate': 1000,
        'replica.fetch.max.bytes': 8192,
      },
      brokerOverrides: Object.fromEntries(
        ports.map((port, id) => [id, { 'brook.metrics.listener': `http://127.0.0.1:${port}` }]),
      ),
    });
  });
  after(() => cluster?.stop());

  const scrapeAll = (): Promise<Samples[]> => Promise.all(ports.map((p) => scrape(p)));

  it('exactly one broker counts an active controller, and no partition is offline', async () => {
    const controllerId = await agreedController(cluster!.brokers);
    const samples = await scrapeAll();
    const active = samples.map((s) => s.value('kafka_controller_kafkacontroller_activecontrollercount'));
    assert.equal(
      active.reduce((a, b) => a + b, 0),
      1,
    );
    assert.equal(active[controllerId], 1);
    assert.equal(samples[controllerId]!.value('kafka_controller_kafkacontroller_offlinepartitionscount'), 0);
  });

  it('a stopped follower makes its partition under-replicated until it catches up again', {
    timeout: 120_000,
  }, async () => {
    const brokers = cluster!.brokers;
    const controllerId = await agreedController(brokers);
    // The follower to stop is not the controller, so that stopping it does not also move the controller.
    const others = [0, 1, 2].filter((id) => id !== controllerId);
    const leaderId = others[0]!;
    const followerId = others[1]!;
    await createTopicOn(brokers[controllerId]!, TOPIC, {
      assignments: { 0: [leaderId, followerId, controllerId] },
    });
    await agreedLeader(brokers, TOPIC, (v) => v.leaderId === leaderId && v.isrNodes.length === 3);
    const client = await WireClient.connect(brokers[leaderId]!.host, brokers[leaderId]!.port);
    try {
      const answer = await produceBatch(client, TOPIC, buildBatch([{ value: 'one' }, { value: 'two' }]), -1);
      assert.equal(answer.errorCode, ErrorCode.NONE);
    } finally {
      client.close();
    }
    const leaderPort = ports[leaderId]!;
    const followerPort = ports[followerId]!;
    const fetcherLag = { clientId: `ReplicaFetcherThread-0-${leaderId}`, topic: TOPIC, partition: 0 };
    await eventually(async () => {
      const s = await scrape(leaderPort);
      assert.equal(s.value('kafka_server_replicamanager_underreplicatedpartitions'), 0);
      assert.equal(s.value('kafka_log_log_logendoffset', { topic: TOPIC, partition: 0 }), 2);
      // The followers' fetches are timed as Kafka's FetchFollower on the leader.
      assert.ok(s.value('kafka_network_requestmetrics_totaltimems_count', { request: 'FetchFollower' }) > 0);
      const f = await scrape(followerPort);
      assert.equal(f.value('kafka_server_fetcherlagmetrics_consumerlag', fetcherLag), 0);
      assert.equal(f.value('kafka_log_log_logendoffset', { topic: TOPIC, partition: 0 }), 2);
    });
    const shrinksBefore = (await scrape(leaderPort)).value('kafka_server_replicamanager_isrshrinks_total');
    const expandsBefore = (await scrape(leaderPort)).value('kafka_server_replicamanager_isrexpands_total');

    process.kill(brokers[followerId]!.pid, 'SIGSTOP');
    try {
      await eventually(async () => {
        const s = await scrape(leaderPort);
        assert.equal(s.value('kafka_server_replicamanager_underreplicatedpartitions'), 1);
        assert.equal(s.value('kafka_cluster_partition_underreplicated', { topic: TOPIC, partition: 0 }), 1);
        assert.equal(s.value('kafka_server_replicamanager_isrshrinks_total'), shrinksBefore + 1);
      });
      // The partition still has two in-sync replicas, above min.insync.replicas (1).
      const s = await scrape(leaderPort);
      assert.equal(s.value('kafka_server_replicamanager_underminisrpartitioncount'), 0);
    } finally {
      process.kill(brokers[followerId]!.pid, 'SIGCONT');
    }

    await eventually(async () => {
      const s = await scrape(leaderPort);
      assert.equal(s.value('kafka_server_replicamanager_underreplicatedpartitions'), 0);
      assert.equal(s.value('kafka_server_replicamanager_isrexpands_total'), expandsBefore + 1);
      const ready = await httpRequest(followerPort, '/readyz');
      assert.equal(ready.status, 200, ready.body);
    });
    const sums = await scrapeAll();
    assert.equal(
      sums.reduce((n, s) => n + s.value('kafka_controller_kafkacontroller_activecontrollercount'), 0),
      1,
    );
  });

  it('/readyz answers 503 naming a partition whose ISR lacks the broker until it has caught up', {
    timeout: 240_000,
  }, async () => {
    const brokers = cluster!.brokers;
    const controllerId = await agreedController(brokers);
    const others = [0, 1, 2].filter((id) => id !== controllerId);
    const leaderId = others[0]!;
    const followerId = others[1]!;
    const topic = 'throttled';
    await createTopicOn(brokers[controllerId]!, topic, {
      assignments: { 0: [leaderId, followerId, controllerId] },
      // min.insync.replicas 2: a follower out of the ISR leaves the partition at min ISR. Not 3: under min ISR
      // the leader's high watermark stays (Kafka 3.7+, KAFKA-15583), and the follower's lag, measured against it
      // as Kafka's FetcherLagMetrics measures it, would stay 0 however far behind the leader's log it is.
      configs: { 'leader.replication.throttled.replicas': '*', 'min.insync.replicas': '2' },
    });
    await agreedLeader(brokers, topic, (v) => v.leaderId === leaderId && v.isrNodes.length === 3);
    const leaderPort = ports[leaderId]!;
    const followerPort = ports[followerId]!;
    await eventually(async () => assert.equal((await httpRequest(followerPort, '/readyz')).status, 200));

    process.kill(brokers[followerId]!.pid, 'SIGSTOP');
    try {
      await eventually(async () => {
        const s = await scrape(leaderPort);
        assert.equal(s.value('kafka_cluster_partition_underreplicated', { topic, partition: 0 }), 1);
        // No other partition led here has its ISR at its min.insync.replicas.
        assert.equal(s.value('kafka_server_replicamanager_atminisrpartitioncount'), 1);
        assert.equal(s.value('kafka_server_replicamanager_underminisrpartitioncount'), 0);
      });
      // About 300 KiB the follower misses: minutes of catching up at the throttled rate.
      const client = await WireClient.connect(brokers[leaderId]!.host, brokers[leaderId]!.port);
      try {
        for (let i = 0; i < 60; i++) {
          const batch = buildBatch([{ value: Buffer.alloc(5000, i) }]);
          const answer = await produceBatch(client, topic, batch, 1);
          assert.equal(answer.errorCode, ErrorCode.NONE);
        }
      } finally {
        client.close();
      }
    } finally {
      process.kill(brokers[followerId]!.pid, 'SIGCONT');
    }

    // Running again, registered and serving, but out of the ISR and behind: not ready, and it says why.
    const fetcherLag = { clientId: `ReplicaFetcherThread-0-${leaderId}`, topic, partition: 0 };
    await eventually(async () => {
      const answer = await httpRequest(followerPort, '/readyz');
      assert.equal(answer.status, 503, answer.body);
      const body = JSON.parse(answer.body) as { missing: string[]; partitionsNotInIsr: string[] };
      assert.ok(body.partitionsNotInIsr.includes(`${topic}-0`), answer.body);
      assert.deepEqual(
        body.missing.filter((m) => !m.startsWith('not in the ISR')),
        [],
        'only the ISR is missing',
      );
      const f = await scrape(followerPort);
      assert.ok(f.value('kafka_server_fetcherlagmetrics_consumerlag', fetcherLag) > 0);
    }, 60_000);

    // The throttle lifted, it catches up, rejoins the ISR and is ready.
    const admin = new Admin({ bootstrapServers: brokers[controllerId]!.bootstrap });
    try {
      const [result] = await admin.incrementalAlterConfigs([
        {
          type: 'topic',
          name: topic,
          ops: [{ name: 'leader.replication.throttled.replicas', op: 'delete' }],
        },
      ]);
      assert.equal(result!.error, null);
    } finally {
      await admin.close();
    }
    await eventually(async () => {
      const answer = await httpRequest(followerPort, '/readyz');
      assert.equal(answer.status, 200, answer.body);
      const s = await scrape(leaderPort);
      assert.equal(s.value('kafka_cluster_partition_underreplicated', { topic, partition: 0 }), 0);
      const f = await scrape(followerPort);
      assert.equal(f.value('kafka_server_fetcherlagmetrics_consumerlag', fetcherLag), 0);
    }, 120_000);
    assert.equal((await scrape(leaderPort)).value('kafka_server_replicamanager_atminisrpartitioncount'), 0);
  });

  it('a partition whose only replica stops is offline on the controller until its broker is back', {
    timeout: 180_000,
  }, async () => {
    const brokers = cluster!.brokers;
    const controllerId = await agreedController(brokers);
    const ownerId = [0, 1, 2].find((id) => id !== controllerId)!;
    const topic = 'solo';
    await createTopicOn(brokers[controllerId]!, topic, { assignments: { 0: [ownerId] } });
    await agreedLeader(brokers, topic, (v) => v.leaderId === ownerId);
    const controllerPort = ports[controllerId]!;
    const offline = async () =>
      (await scrape(controllerPort)).value('kafka_controller_kafkacontroller_offlinepartitionscount');
    await eventually(async () => assert.equal(await offline(), 0));

    await brokers[ownerId]!.stop();
    await eventually(async () => assert.equal(await offline(), 1), 60_000);

    await cluster!.start(ownerId);
    await eventually(async () => {
      assert.equal(await offline(), 0);
      const ready = await httpRequest(ports[ownerId]!, '/readyz');
      assert.equal(ready.status, 200, ready.body);
    }, 90_000);
  });
});
