// kafkajs consumer groups against a Brook broker: three members split a 6-partition topic and consume every
// record once; one leaves and the other two take its partitions; committed offsets survive a broker restart;
// fromBeginning true and false (auto.offset.reset earliest and latest) for a group without offsets; the admin
// client lists, describes and deletes groups and reads their offsets.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';

const { Kafka, logLevel } = kafkajs;
type Kafka = InstanceType<typeof Kafka>;
type Consumer = ReturnType<Kafka['consumer']>;

interface Member {
  readonly consumer: Consumer;
  readonly values: { partition: number; value: string }[];
  readonly assignments: number[][];
}

async function startMember(
  kafka: Kafka,
  groupId: string,
  topic: string,
  fromBeginning: boolean,
): Promise<Member> {
  const consumer = kafka.consumer({
    groupId,
    sessionTimeout: 6000,
    rebalanceTimeout: 10_000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 200,
    retry: { retries: 10, initialRetryTime: 100 },
  });
  const member: Member = { consumer, values: [], assignments: [] };
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    member.assignments.push([...(e.payload.memberAssignment[topic] ?? [])].sort());
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      member.values.push({ partition, value: message.value!.toString() });
    },
  });
  return member;
}

const covers = (members: readonly Member[], count: number) => {
  const all = members.flatMap((m) => m.assignments.at(-1) ?? []);
  return all.length === count && new Set(all).size === count;
};

function newKafka(broker: BrokerProcess): Kafka {
  return new Kafka({
    clientId: 'groups-kafkajs',
    brokers: [broker.bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 100 },
  });
}

describe('kafkajs consumer groups against a Brook broker', () => {
  const brokers: BrokerProcess[] = [];
  const consumers: Consumer[] = [];
  const dataDirs: string[] = [];
  after(async () => {
    for (const c of consumers) await c.disconnect().catch(() => {});
    for (const b of brokers) await b.stop();
    for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
  });

  it('three members split six partitions; one leaves and the others take over', {
    timeout: 60_000,
  }, async () => {
    const broker = await startBroker();
    brokers.push(broker);
    const kafka = newKafka(broker);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'split', numPartitions: 6 }], waitForLeaders: true });
    const producer = kafka.producer();
    await producer.connect();
    const members = await Promise.all([0, 1, 2].map(() => startMember(kafka, 'split-group', 'split', true)));
    consumers.push(...members.map((m) => m.consumer));
    const show = () => JSON.stringify(members.map((m) => m.assignments));
    await waitUntil(
      () => members.every((m) => m.assignments.at(-1)?.length === 2) && covers(members, 6),
      30_000,
      show,
    );

    const produce = async (phase: string) => {
      const messages = Array.from({ length: 60 }, (_, i) => ({ value: `${phase}-${i}`, partition: i % 6 }));
      await producer.send({ topic: 'split', messages });
      return messages.map((m) => m.value);
    };
    const first = await produce('one');
    const all = () =>
      members.flatMap((m) => m.values.map((v) => v.value)).filter((v) => v.startsWith('one-'));
    await waitUntil(() => new Set(all()).size === first.length, 20_000, show);
    assert.equal(all().length, first.length, 'each record consumed once in a stable generation');
    for (const m of members) {
      for (const v of m.values) assert.ok(m.assignments.at(-1)!.includes(v.partition));
    }

    const described = await admin.describeGroups(['split-group']);
    assert.equal(described.groups[0]!.state, 'Stable');
    assert.equal(described.groups[0]!.members.length, 3);
    assert.equal(described.groups[0]!.protocolType, 'consumer');
    assert.ok((await admin.listGroups()).groups.some((g) => g.groupId === 'split-group'));

    // One member leaves; the two left split all six partitions between them.
    const leaving = members[0]!;
    await leaving.consumer.disconnect();
    const rest = members.slice(1);
    const counts = rest.map((m) => m.assignments.length);
    await waitUntil(
      () => rest.every((m, i) => m.assignments.length > counts[i]!) && covers(rest, 6),
      30_000,
      show,
    );
    const second = await produce('two');
    const restValues = () =>
      rest.flatMap((m) => m.values.map((v) => v.value)).filter((v) => v.startsWith('two-'));
    await waitUntil(() => new Set(restValues()).size === second.length, 20_000, show);
    assert.equal(restValues().length, second.length);
    assert.equal(leaving.values.filter((v) => v.value.startsWith('two-')).length, 0);

    await Promise.all(rest.map((m) => m.consumer.disconnect()));
    const offsets = await admin.fetchOffsets({ groupId: 'split-group', topics: ['split'] });
    const committed = offsets[0]!.partitions.reduce((sum, p) => sum + Number(p.offset), 0);
    assert.equal(committed, 120, 'every consumed record is committed');
    assert.deepEqual(await admin.deleteGroups(['split-group']), [{ groupId: 'split-group', errorCode: 0 }]);
    const afterDelete = await admin.fetchOffsets({ groupId: 'split-group', topics: ['split'] });
    assert.ok(afterDelete[0]!.partitions.every((p) => p.offset === '-1'));
    await producer.disconnect();
    await admin.disconnect();
  });

  it('committed offsets survive a broker restart; earliest and latest apply without offsets', {
    timeout: 60_000,
  }, async () => {
    const first = await startBroker({ keepDataDir: true });
    dataDirs.push(first.dataDir);
    let kafka = newKafka(first);
    let producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: 'durable',
      messages: Array.from({ length: 30 }, (_, i) => ({ value: `old-${i}` })),
    });
    const reader = await startMember(kafka, 'durable-group', 'durable', true);
    consumers.push(reader.consumer);
    await waitUntil(
      () => reader.values.length === 30,
      20_000,
      () => `${reader.values.length} of 30`,
    );
    await reader.consumer.disconnect();
    await producer.disconnect();
    await first.stop();

    const second = await startBroker({ dataDir: first.dataDir });
    brokers.push(second);
    kafka = newKafka(second);
    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchOffsets({ groupId: 'durable-group', topics: ['durable'] });
    assert.equal(
      offsets[0]!.partitions.reduce((s, p) => s + Number(p.offset), 0),
      30,
    );
    await admin.disconnect();

    producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: 'durable',
      messages: Array.from({ length: 5 }, (_, i) => ({ value: `new-${i}` })),
    });
    const resumed = await startMember(kafka, 'durable-group', 'durable', true);
    const earliest = await startMember(kafka, 'fresh-earliest', 'durable', true);
    const latest = await startMember(kafka, 'fresh-latest', 'durable', false);
    consumers.push(resumed.consumer, earliest.consumer, latest.consumer);
    await waitUntil(
      () => resumed.values.length >= 5 && earliest.values.length >= 35,
      20_000,
      () => JSON.stringify([resumed.values.length, earliest.values.length]),
    );
    assert.deepEqual(
      resumed.values.map((v) => v.value),
      ['new-0', 'new-1', 'new-2', 'new-3', 'new-4'],
      'the group resumes after its committed offsets',
    );
    assert.equal(earliest.values.length, 35);
    // Latest: records written after the group's position was set arrive; none of the older ones do.
    await waitUntil(
      () => latest.assignments.length > 0,
      20_000,
      () => 'latest member never joined',
    );
    for (let i = 0; latest.values.length === 0; i++) {
      assert.ok(i < 60, 'the latest-reset member consumed nothing');
      await producer.send({ topic: 'durable', messages: [{ value: `late-${i}` }] });
      await new Promise((r) => setTimeout(r, 300));
    }
    assert.ok(
      latest.values.every((v) => v.value.startsWith('late-')),
      JSON.stringify(latest.values),
    );
    await producer.disconnect();
    await Promise.all([resumed, earliest, latest].map((m) => m.consumer.disconnect()));
  });
});
