import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { Controller } from '../../src/controller/controller.js';
import {
  brokerPath,
  encodeBrokerRegistration,
  encodeEntityConfig,
  partitionStatePath,
  topicConfigPath,
  topicPath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  admin,
  isrChange,
  liveEpoch,
  newTopic,
  RecordingChannel,
  registration,
  settle,
  startController,
  TestCluster,
} from './helpers.js';

/** Three brokers, broker 1 the controller, and topic t with partition 0 on [2, 3, 1]. */
async function threeBrokers(options: { uncleanLeaderElectionEnable?: boolean } = {}) {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  await cluster.addBroker(2);
  await cluster.addBroker(3);
  const channel = new RecordingChannel();
  const controller = startController(b1.session, 1, channel, options);
  await controller.start();
  const topicAdmin = admin(b1.session, controller);
  const [created] = await topicAdmin.createTopics(
    [newTopic('t', -1, -1, [{ partitionIndex: 0, brokerIds: [2, 3, 1] }])],
    false,
  );
  assert.equal(created!.errorCode, ErrorCode.NONE);
  return { cluster, channel, controller, topicAdmin };
}

test('a new partition is led by the first live replica, with every live replica in the ISR at epoch 0', async () => {
  const { cluster, channel } = await threeBrokers();
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 2);
  assert.deepEqual(state?.isr, [2, 3, 1]);
  assert.equal(state?.leaderEpoch, 0);
  assert.equal(state?.controllerEpoch, 1);
  for (const b of [1, 2, 3]) assert.equal(channel.lastLeaderAndIsr(b, 't', 0)?.leader, 2);
  for (const b of [1, 2, 3])
    assert.ok(channel.of('updateMetadata', b).length > 0, `broker ${b} got UpdateMetadata`);
});

test('when the leader dies, the next ISR replica leads with a higher leader epoch and the ISR shrinks', async () => {
  const { cluster, channel, controller } = await threeBrokers();
  channel.clear();
  cluster.killBroker(2);
  await settle(controller);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 3);
  assert.deepEqual(state?.isr, [3, 1]);
  assert.equal(state?.leaderEpoch, 1);
  assert.equal(state?.version, 1);
  for (const b of [1, 3]) {
    const sent = channel.lastLeaderAndIsr(b, 't', 0);
    assert.equal(sent?.leader, 3);
    assert.equal(sent?.leaderEpoch, 1);
    assert.equal(sent?.partitionEpoch, 1);
  }
  assert.equal(channel.of('leaderAndIsr', 2).length, 0, 'nothing is sent to the dead broker');
  const metadata = channel.of('updateMetadata', 3).at(-1)!.request;
  assert.deepEqual(
    metadata.liveBrokers.map((b) => b.id),
    [1, 3],
  );
  assert.deepEqual(metadata.topicStates[0]?.partitionStates[0]?.offlineReplicas, [2]);
});

test('a dead follower leaves the ISR and the leader keeps leading', async () => {
  const { cluster, controller } = await threeBrokers();
  cluster.killBroker(3);
  await settle(controller);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 2);
  assert.deepEqual(state?.isr, [2, 1]);
});

test('a follower that had already left the ISR dies: UpdateMetadata still lists it among the offline replicas', async () => {
  const { cluster, channel, controller } = await threeBrokers();
  // Leader 2 drops follower 3 from the ISR; then 3 dies, which changes neither leader nor ISR.
  const shrunk = await controller.alterPartition(
    {
      brokerId: 2,
      brokerEpoch: liveEpoch(controller, 2),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 0, 0, [2, 1])] }],
    },
    2,
  );
  assert.equal(shrunk.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  await settle(controller);
  const before = await cluster.partitionState('t', 0);
  channel.clear();
  cluster.killBroker(3);
  await settle(controller);
  const after = await cluster.partitionState('t', 0);
  assert.equal(after?.version, before?.version, 'the partition state was not written');
  for (const b of [1, 2]) {
    const states = channel.of('updateMetadata', b).flatMap((s) => s.request.topicStates);
    const partition = states.find((t) => t.topicName === 't')?.partitionStates[0];
    assert.deepEqual(partition?.offlineReplicas, [3], `broker ${b} learns that replica 3 is offline`);
    assert.deepEqual(partition?.isr, [2, 1]);
  }
  channel.clear();
  await cluster.addBroker(3);
  await settle(controller);
  const back = channel
    .of('updateMetadata', 2)
    .flatMap((s) => s.request.topicStates)
    .find((t) => t.topicName === 't')?.partitionStates[0];
  assert.deepEqual(back?.offlineReplicas, [], 'and that it is back when it registers again');
});

test('without unclean election, a partition whose ISR is gone stays leaderless until an ISR member returns', async () => {
  const { cluster, controller } = await threeBrokers();
  // Leader 2 shrinks the ISR to itself, then dies: replicas 3 and 1 are alive but out of sync.
  const shrunk = await controller.alterPartition(
    {
      brokerId: 2,
      brokerEpoch: liveEpoch(controller, 2),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 0, 0, [2])] }],
    },
    2,
  );
  assert.equal(shrunk.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  cluster.killBroker(2);
  await settle(controller);
  const offline = await cluster.partitionState('t', 0);
  assert.equal(offline?.leader, -1);
  assert.deepEqual(offline?.isr, [2], 'the last ISR member is kept, so that it is the one to come back');
  await cluster.addBroker(2);
  await settle(controller);
  const back = await cluster.partitionState('t', 0);
  assert.equal(back?.leader, 2);
  assert.deepEqual(back?.isr, [2]);
  assert.ok(back!.leaderEpoch > offline!.leaderEpoch);
});

test('unclean.leader.election.enable in the topic config lets an out-of-sync replica lead', async () => {
  const { cluster, controller } = await threeBrokers();
  await cluster.observer.set(
    topicConfigPath('t'),
    encodeEntityConfig({ 'unclean.leader.election.enable': 'true' }),
    -1,
  );
  await controller.alterPartition(
    {
      brokerId: 2,
      brokerEpoch: liveEpoch(controller, 2),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 0, 0, [2])] }],
    },
    2,
  );
  cluster.killBroker(2);
  await settle(controller);
  const state = await cluster.partitionState('t', 0);
  assert.equal(state?.leader, 3);
  assert.deepEqual(state?.isr, [3]);
});

test('an unclean leader is RECOVERING until its AlterPartition says RECOVERED, and cannot grow the ISR before', async () => {
  const { cluster, channel, controller } = await threeBrokers({ uncleanLeaderElectionEnable: true });
  await controller.alterPartition(
    {
      brokerId: 2,
      brokerEpoch: liveEpoch(controller, 2),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 0, 0, [2])] }],
    },
    2,
  );
  cluster.killBroker(2);
  await settle(controller);
  const unclean = await cluster.partitionState('t', 0);
  assert.equal(unclean?.leader, 3);
  assert.equal(unclean?.leaderRecoveryState, 1, 'the state znode says RECOVERING');
  assert.equal(channel.lastLeaderAndIsr(3, 't', 0)?.leaderRecoveryState, 1, 'and so does LeaderAndIsr');
  const grow = (leaderRecoveryState: number) =>
    controller.alterPartition(
      {
        brokerId: 3,
        brokerEpoch: liveEpoch(controller, 3),
        topics: [
          {
            topicName: 't',
            topicId: '',
            partitions: [
              { ...isrChange(0, unclean!.leaderEpoch, unclean!.version, [3, 1]), leaderRecoveryState },
            ],
          },
        ],
      },
      2,
    );
  const refused = await grow(1);
  assert.equal(refused.topics[0]?.partitions[0]?.errorCode, ErrorCode.INVALID_REQUEST);
  const recovered = await grow(0);
  assert.equal(recovered.topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.equal(recovered.topics[0]?.partitions[0]?.leaderRecoveryState, 0);
  const after = await cluster.partitionState('t', 0);
  assert.deepEqual(after?.isr, [3, 1]);
  assert.equal(after?.leaderRecoveryState, 0, 'RECOVERED');
  assert.equal(after?.leaderEpoch, unclean?.leaderEpoch);
});

test('the broker default for unclean election applies to topics that do not set it', async () => {
  const { cluster, controller } = await threeBrokers({ uncleanLeaderElectionEnable: true });
  await controller.alterPartition(
    {
      brokerId: 2,
      brokerEpoch: liveEpoch(controller, 2),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 0, 0, [2])] }],
    },
    2,
  );
  cluster.killBroker(2);
  await settle(controller);
  assert.equal((await cluster.partitionState('t', 0))?.leader, 3);
});

test('deleting a topic stops and deletes its replicas on every broker, removes it from metadata and its znodes', async () => {
  const { cluster, channel, controller, topicAdmin } = await threeBrokers();
  channel.clear();
  const [r] = await topicAdmin.deleteTopics(['t']);
  assert.equal(r!.errorCode, ErrorCode.NONE);
  await settle(controller);
  for (const b of [1, 2, 3]) {
    const stops = channel.of('stopReplica', b);
    assert.equal(stops.length, 1, `broker ${b}`);
    assert.equal(stops[0]!.request.deletePartitions, true);
    assert.equal(stops[0]!.request.topicStates[0]?.partitionStates[0]?.deletePartition, true);
    const metadata = channel.of('updateMetadata', b)[0]!.request;
    assert.equal(metadata.topicStates[0]?.partitionStates[0]?.leader, -2);
  }
  for (const path of [topicPath('t'), topicConfigPath('t'), '/admin/delete_topics/t']) {
    const node = await cluster.observer.exists(path);
    assert.ok(node.ok && node.value === null, `${path} is gone`);
  }
  assert.equal(controller.context?.topics.has('t'), false);
  // The name is free again.
  const [again] = await topicAdmin.createTopics([newTopic('t')], false);
  assert.equal(again!.errorCode, ErrorCode.NONE);
});

test('a topic with a replica on a dead broker waits for it before its deletion completes', async () => {
  const { cluster, channel, controller, topicAdmin } = await threeBrokers();
  cluster.killBroker(3);
  await settle(controller);
  channel.clear();
  await topicAdmin.deleteTopics(['t']);
  await settle(controller);
  // As Kafka's onPartitionDeletion, the replicas on the live brokers are deleted at once; the dead one waits.
  for (const b of [1, 2]) {
    const stops = channel.of('stopReplica', b);
    assert.equal(stops.length, 1, `broker ${b}`);
    assert.equal(stops[0]!.request.deletePartitions, true);
  }
  assert.equal(channel.of('stopReplica', 3).length, 0);
  // As Kafka's onTopicDeletion, the live brokers drop the topic from their metadata at once (leader -2): clients
  // stop seeing it, and a transaction coordinator skips its partitions' markers.
  for (const b of [1, 2]) {
    const leaders = channel
      .of('updateMetadata', b)
      .flatMap((m) => m.request.topicStates.filter((t) => t.topicName === 't'))
      .flatMap((t) => t.partitionStates.map((p) => p.leader));
    assert.ok(leaders.length > 0 && leaders.every((l) => l === -2), `broker ${b}: ${leaders}`);
  }
  assert.ok(((await cluster.observer.exists(topicPath('t'))) as { value: unknown }).value !== null);
  assert.ok(((await cluster.observer.exists('/admin/delete_topics/t')) as { value: unknown }).value !== null);
  await cluster.addBroker(3);
  await settle(controller);
  assert.equal(channel.of('stopReplica', 3).length, 1, 'the returning broker deletes its replicas');
  assert.equal(channel.of('stopReplica').length, 3, 'the others are not asked again');
  const node = await cluster.observer.exists(topicPath('t'));
  assert.ok(node.ok && node.value === null);
});

test('partitions added by createPartitions get leaders and are sent to their replicas as new', async () => {
  const { cluster, channel, topicAdmin } = await threeBrokers();
  const [r] = await topicAdmin.createPartitions(
    [
      {
        name: 't',
        count: 3,
        assignments: [
          [1, 2],
          [3, 1],
        ],
      },
    ],
    false,
  );
  assert.equal(
    r!.errorCode,
    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    'the replication factor of the topic is 3',
  );
  const [ok] = await topicAdmin.createPartitions(
    [
      {
        name: 't',
        count: 3,
        assignments: [
          [1, 2, 3],
          [3, 1, 2],
        ],
      },
    ],
    false,
  );
  assert.equal(ok!.errorCode, ErrorCode.NONE);
  assert.equal((await cluster.partitionState('t', 1))?.leader, 1);
  assert.equal((await cluster.partitionState('t', 2))?.leader, 3);
  const sent = channel.lastLeaderAndIsr(2, 't', 2);
  assert.equal(sent?.isNew, true);
  assert.equal(sent?.leader, 3);
});

test('a broker that restarts (new registration, new epoch) is sent its partitions again', async () => {
  const { cluster, channel, controller } = await threeBrokers();
  cluster.killBroker(3);
  await settle(controller);
  channel.clear();
  await cluster.addBroker(3);
  await settle(controller);
  const sent = channel.of('leaderAndIsr', 3);
  assert.equal(sent.length, 1);
  const epoch = controller.context!.liveBrokers.get(3 as never)!.epoch;
  assert.equal(sent[0]!.request.brokerEpoch, BigInt(epoch));
  assert.equal(sent[0]!.request.topicStates[0]?.partitionStates[0]?.leader, 2);
  const metadata = channel.of('updateMetadata', 3)[0]!.request;
  assert.equal(metadata.topicStates.length, 1, 'the newcomer gets every partition');
});

// A broker that crashed and registered again before the controller read /brokers/ids shows up with a new epoch
// only (Kafka's bounced broker, KIP-380). Its in-memory state is gone, and what it had not flushed may be too, so
// it is first handled as dead (it leaves every ISR, what it led elects another leader) and then as a newcomer,
// as Kafka's controller does with onBrokerFailure and onBrokerStartup.
for (const role of ['leader', 'follower'] as const) {
  test(`a ${role} that bounces between two reads of the brokers leaves the ISR and comes back as a newcomer`, async () => {
    const { cluster, channel, controller } = await threeBrokers();
    const bouncing = role === 'leader' ? 2 : 3;
    const oldEpoch = controller.context!.liveBrokers.get(bouncing as never)!.epoch;
    channel.clear();
    // Both changes land before the controller runs again (the store applies a write when it is called, and
    // watches fire later): it sees the same id with a new epoch.
    cluster.killBroker(bouncing);
    const session = cluster.store.openSession({ sessionTimeoutMs: 6000 });
    const created = session.create(
      brokerPath(bouncing as BrokerId),
      encodeBrokerRegistration(registration(bouncing)),
      'ephemeral',
    );
    assert.equal((await created).ok, true);
    await settle(controller);
    assert.notEqual(controller.context!.liveBrokers.get(bouncing as never)?.epoch, oldEpoch);
    const state = await cluster.partitionState('t', 0);
    assert.equal(state?.leader, role === 'leader' ? 3 : 2);
    assert.deepEqual(state?.isr, role === 'leader' ? [3, 1] : [2, 1]);
    assert.equal(
      state?.leaderEpoch,
      1,
      'an ISR change by the controller bumps the leader epoch (ZooKeeper mode)',
    );
    const sent = channel.of('leaderAndIsr', bouncing).at(-1)?.request.topicStates[0]?.partitionStates[0];
    assert.equal(sent?.leader, state?.leader, 'the bounced broker is told who leads now');
    assert.deepEqual(sent?.isr, state?.isr);
  });
}

test('a request whose send fails is retried while its broker stays registered, and dropped once it is gone', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  await cluster.addBroker(2);
  await cluster.addBroker(3);
  const channel = new RecordingChannel();
  const sleepers: (() => void)[] = [];
  const controller = new Controller({
    brokerId: 1 as BrokerId,
    store: b1.session,
    channel,
    retry: {
      attemptsMax: 5,
      backoffMs: 1,
      backoffMaxMs: 1,
      stillWanted: (broker, epoch) =>
        BigInt(controller.context?.liveBrokers.get(broker)?.epoch ?? -2) === epoch,
      sleep: () => new Promise<void>((r) => sleepers.push(r)),
    },
  });
  await controller.start();
  const release = async () => {
    while (sleepers.length > 0) sleepers.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  channel.failuresLeft.set(3, 2);
  const created = admin(b1.session, controller).createTopics(
    [newTopic('t', -1, -1, [{ partitionIndex: 0, brokerIds: [2, 3, 1] }])],
    false,
  );
  for (let i = 0; i < 50 && channel.of('leaderAndIsr', 3).length < 3; i++) await release();
  await created;
  const toThree = channel.of('leaderAndIsr', 3);
  assert.equal(toThree.length, 3, 'two failed attempts and the one that arrived');
  assert.deepEqual(toThree[0]!.request, toThree[2]!.request);

  // Broker 3 becomes unreachable, is sent an update, then dies: the retries stop.
  channel.failing.add(3);
  channel.clear();
  const answer = controller.alterPartition(
    {
      brokerId: 2,
      brokerEpoch: liveEpoch(controller, 2),
      topics: [{ topicName: 't', topicId: '', partitions: [isrChange(0, 0, 0, [2, 1])] }],
    },
    2,
  );
  assert.equal((await answer).topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  for (let i = 0; i < 50 && channel.of('updateMetadata', 3).length < 1; i++)
    await new Promise((r) => setImmediate(r));
  assert.equal(channel.of('updateMetadata', 3).length, 1);
  cluster.killBroker(3);
  for (let i = 0; i < 50 && controller.context!.liveBrokers.has(3 as BrokerId); i++) {
    await new Promise((r) => setImmediate(r));
  }
  assert.equal(controller.context!.liveBrokers.has(3 as BrokerId), false);
  await release();
  await controller.sync();
  assert.equal(
    channel.of('updateMetadata', 3).length,
    2,
    'one retry, then the broker is gone and the request dropped',
  );
});

test('requests to a broker that stops answering are bounded, and it gets the whole state again once it catches up', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  await cluster.addBroker(2);
  await cluster.addBroker(3);
  const channel = new RecordingChannel();
  let releaseBroker3: () => void = () => {};
  let held = new Promise<void>((resolve) => {
    releaseBroker3 = resolve;
  });
  const inner = channel.updateMetadata.bind(channel);
  channel.updateMetadata = async (brokerId, request) => {
    if (brokerId === 3) await held;
    return inner(brokerId, request);
  };
  const controller = new Controller({
    brokerId: 1 as BrokerId,
    store: b1.session,
    channel,
    queuedRequestsPerBrokerMax: 3,
  });
  await controller.start();
  const topicAdmin = admin(b1.session);
  for (let i = 0; i < 6; i++) {
    await topicAdmin.createTopics(
      [newTopic(`t${i}`, -1, -1, [{ partitionIndex: 0, brokerIds: [2, 3] }])],
      false,
    );
    await settle2();
  }
  const before = channel.of('leaderAndIsr', 3).length;
  assert.ok(
    before <= 1,
    `broker 3 is stuck behind its first UpdateMetadata (${before} LeaderAndIsr delivered)`,
  );
  held = Promise.resolve();
  releaseBroker3();
  await settle(controller);
  for (let i = 0; i < 6; i++)
    assert.equal(channel.lastLeaderAndIsr(3, `t${i}`, 0)?.leader, 2, `broker 3 knows t${i}`);
  const last = channel.of('updateMetadata', 3).at(-1)!.request;
  assert.equal(last.topicStates.length, 6, 'the resynchronisation carries every topic');
  await controller.stop();

  async function settle2(): Promise<void> {
    for (let j = 0; j < 5; j++) await new Promise((r) => setImmediate(r));
  }
});

test('a state changed under the controller is read again and the change retried; the other partitions are written', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  await cluster.addBroker(2);
  await cluster.addBroker(3);
  const controller = startController(b1.session, 1, new RecordingChannel());
  await controller.start();
  await admin(b1.session, controller).createTopics(
    [
      newTopic('t', -1, -1, [
        { partitionIndex: 0, brokerIds: [2, 3] },
        { partitionIndex: 1, brokerIds: [2, 3] },
        { partitionIndex: 2, brokerIds: [2, 3] },
      ]),
    ],
    false,
  );
  // Someone else rewrites partition 1's state (same content, new version): the controller's version is stale.
  const node = await cluster.observer.get(partitionStatePath('t', 1 as never));
  assert.ok(node.ok);
  assert.ok(
    (
      await cluster.observer.set(
        partitionStatePath('t', 1 as never),
        node.value.data,
        node.value.stat.version,
      )
    ).ok,
  );
  cluster.killBroker(2);
  await settle(controller);
  for (const p of [0, 1, 2]) {
    const state = await cluster.partitionState('t', p);
    assert.equal(state?.leader, 3, `partition ${p}`);
    assert.deepEqual(state?.isr, [3]);
  }
  assert.equal((await cluster.partitionState('t', 1))?.version, 2);
  assert.equal((await cluster.partitionState('t', 0))?.version, 1);
});

test('sync gives up waiting for a broker that does not answer after its timeout', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  await cluster.addBroker(2);
  const channel = new RecordingChannel();
  const inner = channel.leaderAndIsr.bind(channel);
  channel.leaderAndIsr = (brokerId, request) =>
    brokerId === 2 ? new Promise(() => {}) : inner(brokerId, request);
  const controller = startController(b1.session, 1, channel);
  await controller.start();
  await admin(b1.session).createTopics(
    [newTopic('t', -1, -1, [{ partitionIndex: 0, brokerIds: [1, 2] }])],
    false,
  );
  // The controller's timer does not keep a process alive; this test's process needs something that does.
  const keepAlive = setInterval(() => {}, 1000);
  after(() => clearInterval(keepAlive));
  const started = Date.now();
  await controller.sync(['t'], 200);
  const waitedMs = Date.now() - started;
  assert.ok(waitedMs >= 150 && waitedMs < 5000, `waited ${waitedMs} ms`);
  assert.equal(
    (await cluster.partitionState('t', 0))?.leader,
    1,
    'the controller acted before the wait ended',
  );
});

test('a registration changed in place (same epoch) reaches every broker through UpdateMetadata', async () => {
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  const b2 = await cluster.addBroker(2);
  const channel = new RecordingChannel();
  const controller = startController(b1.session, 1, channel);
  await controller.start();
  channel.clear();
  const moved = { ...registration(2, 'west') };
  const node = await b2.session.get(brokerPath(2 as BrokerId));
  assert.ok(node.ok);
  assert.ok(
    (
      await b2.session.set(
        brokerPath(2 as BrokerId),
        encodeBrokerRegistration(moved),
        node.value.stat.version,
      )
    ).ok,
  );
  await settle(controller);
  for (const b of [1, 2]) {
    const last = channel.of('updateMetadata', b).at(-1)?.request;
    assert.equal(last?.liveBrokers.find((x) => x.id === 2)?.rack, 'west', `broker ${b} learnt the new rack`);
  }
  assert.equal(channel.of('leaderAndIsr').length, 0, 'no leadership changes');
});

test('stopping the controller fails requests in flight to a broker that never answers, and does not wait for it', async () => {
  // Broker 3 accepts requests and never answers (a SIGSTOPped process): its requests end only when the channel
  // closes, which the controller's stop must do.
  class HangingChannel extends RecordingChannel {
    private readonly hung: (() => void)[] = [];
    closed = false;
    private hang<T>(brokerId: number, answer: () => Promise<T>): Promise<T> {
      if (brokerId !== 3) return answer();
      return new Promise<T>((_, reject) => this.hung.push(() => reject(new Error('connection closed'))));
    }
    override leaderAndIsr(brokerId: BrokerId, request: Parameters<RecordingChannel['leaderAndIsr']>[1]) {
      return this.hang(brokerId, () => super.leaderAndIsr(brokerId, request));
    }
    override updateMetadata(brokerId: BrokerId, request: Parameters<RecordingChannel['updateMetadata']>[1]) {
      return this.hang(brokerId, () => super.updateMetadata(brokerId, request));
    }
    get hanging(): number {
      return this.hung.length;
    }
    close(): void {
      this.closed = true;
      for (const fail of this.hung.splice(0)) fail();
    }
  }
  const cluster = new TestCluster();
  after(() => cluster.close());
  const b1 = await cluster.addBroker(1);
  await cluster.addBroker(2);
  await cluster.addBroker(3);
  const channel = new HangingChannel();
  const controller = startController(b1.session, 1, channel);
  await controller.start();
  await admin(b1.session).createTopics(
    [newTopic('t', -1, -1, [{ partitionIndex: 0, brokerIds: [1, 2, 3] }])],
    false,
  );
  for (let i = 0; i < 50 && channel.hanging === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(channel.hanging > 0, 'a request to broker 3 is in flight');
  const stopped = controller.stop().then(() => 'stopped');
  const timeout = new Promise((r) => setTimeout(() => r('still waiting'), 2000));
  assert.equal(await Promise.race([stopped, timeout]), 'stopped');
  assert.ok(channel.closed);
});
