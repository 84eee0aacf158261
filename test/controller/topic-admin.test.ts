import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { seededRandom } from '../../src/controller/random.js';
import { type PropagationWaiter, TopicAdmin, type TopicChange } from '../../src/controller/topic-admin.js';
import {
  decodeEntityConfig,
  decodeTopicAssignment,
  deleteTopicPath,
  isUuidString,
  topicConfigPath,
  topicPath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { admin, newTopic, TestCluster } from './helpers.js';

async function cluster3(racks: (string | null)[] = [null, null, null]) {
  const cluster = new TestCluster();
  after(() => cluster.close());
  for (let i = 0; i < racks.length; i++) await cluster.addBroker(i + 1, racks[i]);
  return cluster;
}

async function assignmentOf(cluster: TestCluster, topic: string) {
  const node = await cluster.observer.get(topicPath(topic));
  if (!node.ok) return null;
  const decoded = decodeTopicAssignment(node.value.data);
  assert.ok(decoded.ok);
  return decoded.value;
}

test('createTopics writes the assignment with a Kafka topic id and the configs, resolving -1 to the defaults', async () => {
  const cluster = await cluster3();
  const a = new TopicAdmin({
    store: cluster.observer,
    defaults: { numPartitions: 4, replicationFactor: 2, deleteTopicEnable: true },
    random: seededRandom(3),
  });
  const [r] = await a.createTopics([newTopic('orders', -1, -1, [], { 'cleanup.policy': 'compact' })], false);
  assert.equal(r!.errorCode, ErrorCode.NONE);
  assert.equal(r!.errorMessage, null);
  assert.equal(r!.numPartitions, 4);
  assert.equal(r!.replicationFactor, 2);
  assert.ok(isUuidString(r!.topicId), r!.topicId);
  const written = await assignmentOf(cluster, 'orders');
  assert.equal(written?.topicId, r!.topicId);
  assert.equal(written?.partitions.size, 4);
  for (const p of written!.partitions.values()) assert.equal(new Set(p.replicas).size, 2);
  const config = await cluster.observer.get(topicConfigPath('orders'));
  assert.ok(config.ok);
  assert.deepEqual(decodeEntityConfig(config.value.data), {
    ok: true,
    value: { 'cleanup.policy': 'compact' },
  });
});

test('createTopics refusals carry Kafka codes and messages, per topic', async () => {
  const cluster = await cluster3();
  const a = admin(cluster.observer);
  await a.createTopics([newTopic('a.b')], false);
  const results = await a.createTopics(
    [
      newTopic('bad name'),
      newTopic('a.b'),
      newTopic('a_b'),
      newTopic('big', 1, 4),
      newTopic('zero', 0, 1),
      newTopic('norf', 1, 0),
      newTopic('both', 2, -1, [{ partitionIndex: 0, brokerIds: [1] }]),
      newTopic('gap', -1, -1, [
        { partitionIndex: 0, brokerIds: [1] },
        { partitionIndex: 2, brokerIds: [2] },
      ]),
      newTopic('uneven', -1, -1, [
        { partitionIndex: 0, brokerIds: [1] },
        { partitionIndex: 1, brokerIds: [2, 3] },
      ]),
      newTopic('twice', -1, -1, [{ partitionIndex: 0, brokerIds: [1, 1] }]),
      newTopic('ghost', -1, -1, [{ partitionIndex: 0, brokerIds: [9] }]),
      newTopic('dup'),
      newTopic('dup'),
    ],
    false,
  );
  const codes = Object.fromEntries(results.map((r, i) => [`${i}:${r.name}`, r.errorCode]));
  assert.deepEqual(codes, {
    '0:bad name': ErrorCode.INVALID_TOPIC_EXCEPTION,
    '1:a.b': ErrorCode.TOPIC_ALREADY_EXISTS,
    '2:a_b': ErrorCode.INVALID_TOPIC_EXCEPTION,
    '3:big': ErrorCode.INVALID_REPLICATION_FACTOR,
    '4:zero': ErrorCode.INVALID_PARTITIONS,
    '5:norf': ErrorCode.INVALID_REPLICATION_FACTOR,
    '6:both': ErrorCode.INVALID_REQUEST,
    '7:gap': ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    '8:uneven': ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    '9:twice': ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    '10:ghost': ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    '11:dup': ErrorCode.INVALID_REQUEST,
    '12:dup': ErrorCode.INVALID_REQUEST,
  });
  assert.equal(results[1]!.errorMessage, "Topic 'a.b' already exists.");
  assert.equal(results[2]!.errorMessage, "Topic 'a_b' collides with existing topics: a.b");
  assert.equal(results[3]!.errorMessage, 'Replication factor: 4 larger than available brokers: 3.');
  for (const r of results) assert.equal(r.numPartitions, -1);
  for (const name of ['a_b', 'big', 'both', 'gap', 'ghost'])
    assert.equal(await assignmentOf(cluster, name), null);
});

test('an explicit assignment is written as given', async () => {
  const cluster = await cluster3();
  const [r] = await admin(cluster.observer).createTopics(
    [
      newTopic('manual', -1, -1, [
        { partitionIndex: 1, brokerIds: [3, 1] },
        { partitionIndex: 0, brokerIds: [2, 3] },
      ]),
    ],
    false,
  );
  assert.equal(r!.errorCode, ErrorCode.NONE);
  assert.equal(r!.replicationFactor, 2);
  const written = await assignmentOf(cluster, 'manual');
  assert.deepEqual(written?.partitions.get(0 as never)?.replicas, [2, 3]);
  assert.deepEqual(written?.partitions.get(1 as never)?.replicas, [3, 1]);
});

test('validateOnly checks everything and writes nothing', async () => {
  const cluster = await cluster3();
  const a = admin(cluster.observer);
  const [ok, bad] = await a.createTopics([newTopic('dry', 3, 3), newTopic('dry2', 3, 5)], true);
  assert.equal(ok!.errorCode, ErrorCode.NONE);
  assert.equal(ok!.numPartitions, 3);
  assert.equal(ok!.topicId, 'AAAAAAAAAAAAAAAAAAAAAA', 'no id for a topic that was not made');
  assert.equal(bad!.errorCode, ErrorCode.INVALID_REPLICATION_FACTOR);
  assert.equal(await assignmentOf(cluster, 'dry'), null);
  const config = await cluster.observer.exists(topicConfigPath('dry'));
  assert.ok(config.ok && config.value === null);
});

test('rack-aware assignment through createTopics spreads each partition over both racks', async () => {
  const cluster = await cluster3(['east', 'west', 'east', 'west']);
  const [r] = await admin(cluster.observer).createTopics([newTopic('racked', 8, 2)], false);
  assert.equal(r!.errorCode, ErrorCode.NONE);
  const written = await assignmentOf(cluster, 'racked');
  const rackOf = (id: number) => (id % 2 === 1 ? 'east' : 'west');
  for (const p of written!.partitions.values()) assert.deepEqual(new Set(p.replicas.map(rackOf)).size, 2);
});

test('deleteTopics marks existing topics, answers unknown ones, allows repeats, and honours delete.topic.enable', async () => {
  const cluster = await cluster3();
  const a = admin(cluster.observer);
  const [created] = await a.createTopics([newTopic('gone')], false);
  const results = await a.deleteTopics(['gone', 'never', 'gone']);
  assert.deepEqual(
    results.map((r) => r.errorCode),
    [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NONE],
  );
  assert.equal(results[0]!.topicId, created!.topicId);
  const marker = await cluster.observer.exists(deleteTopicPath('gone'));
  assert.ok(marker.ok && marker.value !== null);
  // While marked, the name cannot be created again.
  const [again] = await a.createTopics([newTopic('gone')], false);
  assert.equal(again!.errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
  assert.equal(again!.errorMessage, "Topic 'gone' is marked for deletion.");

  const disabled = new TopicAdmin({
    store: cluster.observer,
    defaults: { numPartitions: 1, replicationFactor: 1, deleteTopicEnable: false },
  });
  await a.createTopics([newTopic('kept')], false);
  const [refused] = await disabled.deleteTopics(['kept']);
  assert.equal(refused!.errorCode, ErrorCode.TOPIC_DELETION_DISABLED);
  const none = await cluster.observer.exists(deleteTopicPath('kept'));
  assert.ok(none.ok && none.value === null);
});

test('createPartitions adds partitions with the topic replication factor and refuses what Kafka refuses', async () => {
  const cluster = await cluster3();
  const a = admin(cluster.observer);
  await a.createTopics([newTopic('grow', 2, 2), newTopic('doomed', 1, 1)], false);
  await a.deleteTopics(['doomed']);
  const results = await a.createPartitions(
    [
      { name: 'grow', count: 5, assignments: null },
      { name: 'nope', count: 3, assignments: null },
      { name: 'doomed', count: 3, assignments: null },
    ],
    false,
  );
  assert.deepEqual(
    results.map((r) => r.errorCode),
    [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.INVALID_TOPIC_EXCEPTION],
  );
  const grown = await assignmentOf(cluster, 'grow');
  assert.equal(grown?.partitions.size, 5);
  for (const p of grown!.partitions.values()) assert.equal(new Set(p.replicas).size, 2);

  const refusals = await a.createPartitions(
    [
      { name: 'grow', count: 5, assignments: null },
      { name: 'grow', count: 4, assignments: null },
    ],
    false,
  );
  assert.deepEqual(
    refusals.map((r) => r.errorCode),
    [ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST],
  );
  const [same] = await a.createPartitions([{ name: 'grow', count: 5, assignments: null }], false);
  assert.equal(same!.errorCode, ErrorCode.INVALID_PARTITIONS);
  assert.equal(same!.errorMessage, 'Topic already has 5 partitions.');
  const [fewer] = await a.createPartitions([{ name: 'grow', count: 4, assignments: null }], false);
  assert.equal(fewer!.errorCode, ErrorCode.INVALID_PARTITIONS);
  assert.equal(
    fewer!.errorMessage,
    'Topic currently has 5 partitions, which is higher than the requested 4.',
  );
  const [count] = await a.createPartitions([{ name: 'grow', count: 7, assignments: [[1, 2]] }], false);
  assert.equal(count!.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  assert.equal(count!.errorMessage, 'Increasing the number of partitions by 2 but 1 assignments provided.');
  const [unknown] = await a.createPartitions([{ name: 'grow', count: 6, assignments: [[1, 9]] }], false);
  assert.equal(unknown!.errorMessage, 'Unknown broker(s) in replica assignment: 9.');
  const [factor] = await a.createPartitions([{ name: 'grow', count: 6, assignments: [[1]] }], false);
  assert.equal(factor!.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  const [dry] = await a.createPartitions([{ name: 'grow', count: 6, assignments: [[3, 1]] }], true);
  assert.equal(dry!.errorCode, ErrorCode.NONE);
  assert.equal((await assignmentOf(cluster, 'grow'))?.partitions.size, 5);
  const [manual] = await a.createPartitions([{ name: 'grow', count: 6, assignments: [[3, 1]] }], false);
  assert.equal(manual!.errorCode, ErrorCode.NONE);
  const after6 = await assignmentOf(cluster, 'grow');
  assert.deepEqual(after6?.partitions.get(5 as never)?.replicas, [3, 1]);
  assert.equal(after6?.topicId, grown?.topicId);
});

test("a request's timeout bounds the wait for each change: REQUEST_TIMED_OUT for those not seen done, all of them for 0", async () => {
  const cluster = await cluster3();
  const asked: { changes: TopicChange[]; timeoutMs: number }[] = [];
  let synced = 0;
  // Shows only the changes of topics whose name starts with 'seen'.
  const propagation: PropagationWaiter = {
    sync: async () => {
      synced++;
    },
    awaitChanges: async (changes, timeoutMs) => {
      asked.push({ changes: [...changes], timeoutMs });
      return new Set(changes.filter((c) => c.topic.startsWith('seen')).map((c) => c.topic));
    },
  };
  const a = new TopicAdmin({
    store: cluster.observer,
    defaults: { numPartitions: 1, replicationFactor: 1, deleteTopicEnable: true },
    random: seededRandom(5),
    propagation,
  });
  const created = await a.createTopics(
    [newTopic('seen-a'), newTopic('unseen-b'), newTopic('bad name!')],
    false,
    500,
  );
  assert.deepEqual(
    created.map((r) => [r.name, r.errorCode, r.errorMessage]),
    [
      ['seen-a', ErrorCode.NONE, null],
      ['unseen-b', ErrorCode.REQUEST_TIMED_OUT, null],
      ['bad name!', ErrorCode.INVALID_TOPIC_EXCEPTION, created[2]!.errorMessage],
    ],
  );
  // The topic the timeout did not see is written all the same: its creation goes on.
  assert.notEqual(await assignmentOf(cluster, 'unseen-b'), null);
  assert.deepEqual(asked.at(-1)?.changes, [
    { kind: 'created', topic: 'seen-a', topicId: created[0]!.topicId },
    { kind: 'created', topic: 'unseen-b', topicId: created[1]!.topicId },
  ]);
  assert.equal(asked.at(-1)?.timeoutMs, 500);

  const grown = await a.createPartitions(
    [
      { name: 'seen-a', count: 3, assignments: null },
      { name: 'unseen-b', count: 2, assignments: null },
    ],
    false,
    700,
  );
  assert.deepEqual(
    grown.map((r) => [r.name, r.errorCode]),
    [
      ['seen-a', ErrorCode.NONE],
      ['unseen-b', ErrorCode.REQUEST_TIMED_OUT],
    ],
  );
  assert.deepEqual(asked.at(-1)?.changes, [
    { kind: 'partitions', topic: 'seen-a', count: 3 },
    { kind: 'partitions', topic: 'unseen-b', count: 2 },
  ]);

  const deleted = await a.deleteTopics(['seen-a', 'unseen-b', 'missing'], 900);
  assert.deepEqual(
    deleted.map((r) => [r.name, r.errorCode]),
    [
      ['seen-a', ErrorCode.NONE],
      ['unseen-b', ErrorCode.REQUEST_TIMED_OUT],
      ['missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ],
  );
  assert.deepEqual(
    asked.at(-1)?.changes.map((c) => [c.kind, c.topic]),
    [
      ['deleted', 'seen-a'],
      ['deleted', 'unseen-b'],
    ],
  );
  assert.equal(synced, 0, 'a request with a timeout does not wait for the controller to finish');

  // 0 (or less) answers at once with nothing waited for, and, as Kafka's ZkAdminManager, REQUEST_TIMED_OUT for
  // every topic written; a topic refused keeps its own error, and validate_only writes nothing and answers NONE.
  const before = asked.length;
  const now = await a.createTopics([newTopic('unseen-c'), newTopic('bad name!')], false, 0);
  assert.deepEqual(
    now.map((r) => r.errorCode),
    [ErrorCode.REQUEST_TIMED_OUT, ErrorCode.INVALID_TOPIC_EXCEPTION],
  );
  assert.notEqual(await assignmentOf(cluster, 'unseen-c'), null);
  const dry = await a.createTopics([newTopic('unseen-e')], true, -1);
  assert.equal(dry[0]!.errorCode, ErrorCode.NONE);
  const [deletedNow] = await a.deleteTopics(['unseen-c'], 0);
  assert.equal(deletedNow!.errorCode, ErrorCode.REQUEST_TIMED_OUT);
  assert.equal(asked.length, before);
  // Without a timeout (the broker's own calls), the controller's sync is waited for and the answer is NONE.
  const own = await a.createTopics([newTopic('unseen-d')], false);
  assert.equal(own[0]!.errorCode, ErrorCode.NONE);
  assert.equal(synced, 1);
  assert.equal(asked.length, before);
});
