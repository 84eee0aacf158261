// A real cluster: a ZooKeeper server and three broker processes. A replicated topic is written with acks=all,
// its leader is killed with SIGKILL, and every acknowledged record is read back from the new leader, in order,
// after the controller moved leadership; writes continue on the new leader.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedLeader, controllerOf, partitionView, produceToLeader, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'replicated';

/** Writes v<from>.. to the leader the live brokers agree on, as a client would (see produceToLeader). */
async function produce(live: BrokerProcess[], from: number, count: number): Promise<void> {
  const values = Array.from({ length: count }, (_, i) => `v${from + i}`);
  const codes = await produceToLeader(live, TOPIC, values);
  assert.deepEqual(
    codes,
    values.map(() => ErrorCode.NONE),
    'every record acknowledged by all in-sync replicas',
  );
}

describe('a three-broker cluster on ZooKeeper', () => {
  let cluster: TestCluster | undefined;
  let brokers: BrokerProcess[] = [];
  const dead = new Set<BrokerProcess>();

  before(async () => {
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'default.replication.factor': 3,
        'min.insync.replicas': 2,
      },
    });
    brokers = cluster.brokers;
  });
  after(() => cluster?.stop());

  it('replicates acks=all writes and keeps every one of them when the leader is killed', async () => {
    await createTopicOn(brokers[1]!, TOPIC, { numPartitions: 1, replicationFactor: 3 });
    const first = await agreedLeader(brokers, TOPIC, (view) => view.isrNodes.length === 3);
    const leader = brokers[first.leaderId]!;
    await produce(brokers, 0, 40);

    await leader.kill();
    dead.add(leader);
    const survivors = brokers.filter((b) => b !== leader);
    // Every survivor, the new leader among them, knows the new leader before the next write.
    const second = await agreedLeader(survivors, TOPIC, (view) => view.leaderId !== first.leaderId);
    assert.ok(second.leaderEpoch > first.leaderEpoch, 'the new leader has a higher leader epoch');
    assert.ok(!second.isrNodes.includes(first.leaderId), 'the dead broker left the ISR');
    const newLeader = brokers[second.leaderId]!;
    await produce(survivors, 40, 10);

    const client = await WireClient.connect(newLeader.host, newLeader.port);
    try {
      const values = (await readPartition(client, TOPIC, 0)).map((r) => r.value!.toString());
      assert.deepEqual(
        values,
        Array.from({ length: 50 }, (_, i) => `v${i}`),
      );
    } finally {
      client.close();
    }
  });

  it('elects a new controller when the controller is killed, and it serves topic changes', async () => {
    const alive = brokers.filter((b) => !dead.has(b));
    const controllerId = await controllerOf(alive[0]!);
    const controller = brokers[controllerId]!;
    await controller.kill();
    const survivor = alive.find((b) => b !== controller)!;
    const next = await waitFor('a new controller', async () => {
      const id = await controllerOf(survivor);
      return id >= 0 && id !== controllerId ? id : undefined;
    });
    assert.notEqual(next, controllerId);
    await createTopicOn(survivor, 'after-failover', { numPartitions: 2, replicationFactor: 1 });
    const view = await waitFor('the new topic with a leader', async () => {
      const v = await partitionView(survivor, 'after-failover');
      return v !== undefined && v.leaderId >= 0 ? v : undefined;
    });
    assert.ok(view.leaderId !== controllerId, 'led by a live broker');
  });
});
