// unclean.leader.election.enable changed while partitions have no leader, in a real three-broker cluster: the only
// in-sync replica of two partitions dies while their other replica is out of sync, so both stay without a leader.
// Turning the key on for one topic (a topic config) and then for the cluster (the dynamic cluster default, a
// broker config Kafka marks cluster-wide) elects the out-of-sync replica at once, each time, as Kafka's
// controller does on its TopicUncleanLeaderElectionEnable and UncleanLeaderElectionEnable events; nothing else
// changes in the cluster meanwhile (no broker comes or goes) that would make the controller look again.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { startCluster, type TestCluster } from '../helpers/test-cluster.js';

const TOPICS = ['unclean-topic', 'unclean-default'] as const;

describe('unclean.leader.election.enable turned on while partitions have no leader', () => {
  let cluster: TestCluster | undefined;
  let brokers: BrokerProcess[] = [];
  let admin: Admin;
  let controllerId = -1;

  before(async () => {
    cluster = await startCluster({
      overrides: {
        // A follower is paused (SIGSTOP) for a few seconds; its session outlives that.
        'zookeeper.session.timeout.ms': 10_000,
        'replica.lag.time.max.ms': 1000,
      },
    });
    brokers = cluster.brokers;
    admin = new Admin({ bootstrapServers: brokers.map((b) => b.bootstrap), clientId: 'unclean-dynamic' });
    controllerId = await agreedController(brokers, 60_000);
  });
  after(async () => {
    await admin?.close();
    await cluster?.stop();
  });

  const leaderOf = async (topic: string) => (await partitionView(brokers[controllerId]!, topic))?.leaderId;

  it('elects the out-of-sync replica once the topic, then the cluster default, allows it', async () => {
    const [first, second] = [0, 1, 2].filter((id) => id !== controllerId) as [number, number];
    const created = await admin.createTopics(
      TOPICS.map((topic) => ({ topic, replicaAssignment: { 0: [first, second] } })),
    );
    assert.deepEqual(
      created.map((c) => c.error),
      [null, null],
    );
    for (const topic of TOPICS) {
      await waitFor(
        `a full ISR of ${topic}`,
        async () => {
          const v = await partitionView(brokers[first]!, topic);
          return v?.leaderId === first && v.isrNodes.length === 2 ? v : undefined;
        },
        60_000,
      );
    }

    process.kill(brokers[second]!.pid, 'SIGSTOP');
    try {
      // acks=all completes once the leader has dropped the silent follower from the ISR.
      for (const topic of TOPICS) {
        assert.deepEqual(await produceValues(brokers[first]!, topic, ['a']), [ErrorCode.NONE]);
        await waitFor(
          `the ISR of ${topic}'s leader alone`,
          async () => {
            const v = await partitionView(brokers[controllerId]!, topic);
            return v?.isrNodes.length === 1 ? v : undefined;
          },
          60_000,
        );
      }
      await brokers[first]!.kill();
    } finally {
      process.kill(brokers[second]!.pid, 'SIGCONT');
    }
    for (const topic of TOPICS)
      await waitFor(
        `${topic} without a leader`,
        async () => ((await leaderOf(topic)) === -1 ? true : undefined),
        60_000,
      );

    const byTopic = await admin.incrementalAlterConfigs([
      {
        type: 'topic',
        name: TOPICS[0],
        ops: [{ name: 'unclean.leader.election.enable', op: 'set', value: 'true' }],
      },
    ]);
    assert.equal(byTopic[0]?.error, null);
    await waitFor(
      `${TOPICS[0]} led by the out-of-sync replica`,
      async () => ((await leaderOf(TOPICS[0])) === second ? true : undefined),
      60_000,
    );
    assert.equal(await leaderOf(TOPICS[1]), -1, 'the other topic still does not allow it');

    const byDefault = await admin.incrementalAlterConfigs([
      {
        type: 'broker',
        name: '',
        ops: [{ name: 'unclean.leader.election.enable', op: 'set', value: 'true' }],
      },
    ]);
    assert.equal(byDefault[0]?.error, null);
    await waitFor(
      `${TOPICS[1]} led by the out-of-sync replica`,
      async () => ((await leaderOf(TOPICS[1])) === second ? true : undefined),
      60_000,
    );
    const log = brokers[controllerId]!.log();
    for (const topic of TOPICS)
      assert.match(log, new RegExp(`unclean leader election for ${topic}-0: broker ${second} leads`));
    // The controller names the new leader before that broker has applied its LeaderAndIsr: write once it leads.
    await waitFor(
      `a write to ${TOPICS[1]} at its new leader`,
      async () =>
        (await produceValues(brokers[second]!, TOPICS[1], ['b']))[0] === ErrorCode.NONE ? true : undefined,
      60_000,
    );
  });
});
