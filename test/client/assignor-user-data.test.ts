// A pluggable ConsumerPartitionAssignor against a real broker: each member's subscription user data reaches the
// leader's assign(), the leader's per-member user data reaches every member's onAssignment() with the
// generation, user data is asked for again at each join, and a group whose members do not all support the
// pluggable assignor falls back to a built-in one that every member lists.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import type {
  Assignment,
  AssignmentGeneration,
  ConsumerPartitionAssignor,
  TopicPartition,
} from '../../src/client/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';

let broker: BrokerProcess;
let admin: Admin;

before(async () => {
  broker = await startBroker();
  admin = new Admin({ bootstrapServers: broker.bootstrap });
});

after(async () => {
  await admin?.close();
  await broker?.stop();
});

/**
 * A test assignor: each member subscribes with "<label>#<join count>"; the leader gives every partition to the
 * member whose label sorts first and sends each member a JSON map of every member's subscription user data.
 */
class LabelAssignor implements ConsumerPartitionAssignor {
  readonly name = 'label-test';
  joins = 0;
  seen: { assignment: Assignment; generation: AssignmentGeneration }[] = [];
  leaderRuns = 0;

  constructor(readonly label: string) {}

  subscriptionUserData(): Buffer {
    this.joins++;
    return Buffer.from(`${this.label}#${this.joins}`);
  }

  assign(
    cluster: Parameters<ConsumerPartitionAssignor['assign']>[0],
    group: Parameters<ConsumerPartitionAssignor['assign']>[1],
  ) {
    this.leaderRuns++;
    const labels = new Map([...group.subscriptions].map(([id, s]) => [id, s.userData?.toString() ?? '']));
    const first = [...labels].sort((a, b) => (a[1] < b[1] ? -1 : 1))[0]![0];
    const all: TopicPartition[] = [];
    const topics = [...new Set([...group.subscriptions.values()].flatMap((s) => s.topics))].sort();
    for (const topic of topics) {
      const n = cluster.partitionCountForTopic(topic) ?? 0;
      for (let p = 0; p < n; p++) all.push({ topic, partition: p });
    }
    const userData = Buffer.from(JSON.stringify(Object.fromEntries(labels)));
    return {
      assignments: new Map(
        [...group.subscriptions.keys()].map((id) => [id, { partitions: id === first ? all : [], userData }]),
      ),
    };
  }

  onAssignment(assignment: Assignment, generation: AssignmentGeneration): void {
    this.seen.push({ assignment, generation });
  }
}

function member(
  groupId: string,
  strategy: ConstructorParameters<typeof Consumer>[0]['partitionAssignmentStrategy'],
) {
  return new Consumer({
    bootstrapServers: broker.bootstrap,
    groupId,
    autoOffsetReset: 'earliest',
    heartbeatIntervalMs: 200,
    sessionTimeoutMs: 6000,
    maxPollIntervalMs: 10_000,
    partitionAssignmentStrategy: strategy,
  });
}

/** Polls each consumer in its own loop until done() holds (a join waits for every member to rejoin). */
async function pollUntil(consumers: Consumer[], done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await Promise.all(
    consumers.map(async (c) => {
      while (!done() && Date.now() < deadline) await c.poll(100);
    }),
  );
  assert.ok(done(), 'condition not reached in time');
}

test('two members exchange user data through the leader of the group', async () => {
  const [r] = await admin.createTopics([{ topic: 'ud-topic', numPartitions: 3, replicationFactor: 1 }]);
  assert.equal(r!.error, null);
  const alpha = new LabelAssignor('alpha');
  const beta = new LabelAssignor('beta');
  const a = member('ud-group', [alpha]);
  const b = member('ud-group', [beta]);
  const assignedA: string[] = [];
  try {
    a.subscribe(['ud-topic'], {
      onPartitionsAssigned: () => {
        // onAssignment runs before the listener, with the same generation.
        assignedA.push(`listener after ${alpha.seen.length} onAssignment calls`);
      },
    });
    b.subscribe(['ud-topic']);
    const both = () => {
      const la = alpha.seen.at(-1);
      const lb = beta.seen.at(-1);
      if (la === undefined || lb === undefined) return false;
      return la.generation.generationId === lb.generation.generationId && Object.keys(parse(la)).length === 2;
    };
    await pollUntil([a, b], both);
    const la = alpha.seen.at(-1)!;
    const lb = beta.seen.at(-1)!;
    // Each member's user data reached the leader, and the leader's answer reached both members.
    const map = parse(la);
    assert.deepEqual(Object.values(map).sort(), [`alpha#${alpha.joins}`, `beta#${beta.joins}`]);
    assert.deepEqual(parse(lb), map);
    assert.equal(map[la.generation.memberId], `alpha#${alpha.joins}`);
    assert.equal(map[lb.generation.memberId], `beta#${beta.joins}`);
    assert.equal(alpha.leaderRuns + beta.leaderRuns >= 1, true);
    // The assignment's partitions are the consumer's: all three to alpha (its label sorts first), none to beta.
    assert.deepEqual(la.assignment.partitions.map((tp) => tp.partition).sort(), [0, 1, 2]);
    assert.deepEqual(lb.assignment.partitions, []);
    assert.equal(a.assignment().length, 3);
    assert.equal(b.assignment().length, 0);
    assert.equal(la.generation.generationId, a.groupMetadata().generationId);
    assert.equal(la.generation.memberId, a.groupMetadata().memberId);
    assert.ok(assignedA.length > 0 && !assignedA.some((e) => e === 'listener after 0 onAssignment calls'));

    // A rebalance asked for by one member: both join again and send fresh user data.
    const generation = la.generation.generationId;
    const joinsBefore = alpha.joins;
    a.enforceRebalance();
    await pollUntil([a, b], () => both() && alpha.seen.at(-1)!.generation.generationId > generation);
    assert.ok(alpha.joins > joinsBefore, 'subscriptionUserData is asked for at each join');
    assert.equal(parse(alpha.seen.at(-1)!)[a.groupMetadata().memberId], `alpha#${alpha.joins}`);
    const [d] = await admin.describeGroups(['ud-group']);
    assert.equal(d!.protocol, 'label-test');
  } finally {
    await a.close();
    await b.close();
  }
});

test('a member that lists a built-in assignor after its own joins a group that only has the built-in', async () => {
  const [r] = await admin.createTopics([{ topic: 'ud-mixed', numPartitions: 2, replicationFactor: 1 }]);
  assert.equal(r!.error, null);
  const custom = new LabelAssignor('gamma');
  const a = member('ud-mixed-group', [custom, 'range']);
  const b = member('ud-mixed-group', ['range']);
  try {
    a.subscribe(['ud-mixed']);
    b.subscribe(['ud-mixed']);
    await pollUntil([a, b], () => a.assignment().length === 1 && b.assignment().length === 1);
    assert.equal(custom.leaderRuns, 0);
    assert.equal(custom.seen.length, 0, 'onAssignment belongs to the chosen assignor only');
    const [d] = await admin.describeGroups(['ud-mixed-group']);
    assert.equal(d!.protocol, 'range');
  } finally {
    await a.close();
    await b.close();
  }
});

test('assignor names must be unique and known', async () => {
  const twice = member('x', [new LabelAssignor('a'), new LabelAssignor('b')]);
  const unknown = member('x', ['nope' as 'range']);
  try {
    assert.throws(() => twice.subscribe(['t']), /repeat/);
    assert.throws(() => unknown.subscribe(['t']), /unknown assignor/);
  } finally {
    await twice.close();
    await unknown.close();
  }
});

function parse(s: { assignment: Assignment }): Record<string, string> {
  return JSON.parse(s.assignment.userData!.toString()) as Record<string, string>;
}
