// One consumer group of three different clients on a 6-partition topic: kcat -G (librdkafka 2.0.2), kafka-python
// 2.0.2 and confluent-kafka-python, all with the range assignor. They split the partitions; every record is
// consumed exactly once while the generation is stable; then kafka-python leaves (LeaveGroup) and kcat is killed
// (found by its 6 s session timeout), and confluent-kafka takes over every partition and consumes what follows.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { coversExactly, GroupMember } from '../coordinator/group-members.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';

const { Kafka, logLevel } = kafkajs;
const PARTITIONS = 6;
const PER_PARTITION = 20;

describe('a consumer group of kcat, kafka-python and confluent-kafka-python', () => {
  let broker: BrokerProcess;
  let producer: ReturnType<InstanceType<typeof Kafka>['producer']>;
  const members: GroupMember[] = [];
  before(async () => {
    broker = await startBroker({ overrides: { 'group.initial.rebalance.delay.ms': 1500 } });
    const kafka = new Kafka({
      clientId: 'groups-mixed',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic: 'mixed', numPartitions: PARTITIONS }],
      waitForLeaders: true,
    });
    await admin.disconnect();
    producer = kafka.producer();
    await producer.connect();
  });
  after(async () => {
    for (const m of members) await m.kill();
    await producer?.disconnect();
    await broker?.stop();
  });

  const produce = async (phase: string) => {
    const values: string[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const messages = Array.from({ length: PER_PARTITION }, (_, i) => ({
        value: `${phase}-${p}-${i}`,
        partition: p,
      }));
      values.push(...messages.map((m) => m.value));
      await producer.send({ topic: 'mixed', messages });
    }
    return values;
  };

  const describeAll = () =>
    members.map((m) => `${m.name}: ${JSON.stringify(m.assignments)}\n${m.log()}`).join('\n');

  it('splits the partitions, survives a leave and a crash, and loses no record', {
    timeout: 90_000,
  }, async () => {
    const kafkaPython = GroupMember.python(
      'kafka-python',
      broker.bootstrap,
      'mixed-group',
      'mixed',
      'earliest',
    );
    const kcat = GroupMember.kcat(broker.bootstrap, 'mixed-group', 'mixed', 'earliest');
    const confluent = GroupMember.python('confluent', broker.bootstrap, 'mixed-group', 'mixed', 'earliest');
    members.push(kafkaPython, kcat, confluent);
    await waitUntil(
      () => members.every((m) => m.latestAssignment.length === 2) && coversExactly(members, PARTITIONS),
      40_000,
      describeAll,
    );

    const first = await produce('one');
    const consumedFirst = () => members.flatMap((m) => m.records).filter((r) => r.value.startsWith('one-'));
    await waitUntil(
      () => new Set(consumedFirst().map((r) => r.value)).size === first.length,
      30_000,
      describeAll,
    );
    const seen = consumedFirst().map((r) => r.value);
    assert.equal(seen.length, first.length, 'no record consumed twice in a stable generation');
    assert.deepEqual(new Set(seen), new Set(first));
    for (const m of members) {
      for (const r of m.records) {
        assert.ok(
          m.latestAssignment.includes(r.partition),
          `${m.name} consumed partition ${r.partition} it was not given`,
        );
      }
    }

    // kafka-python leaves cleanly: the other two rebalance at once and split all six partitions. Their
    // assignments are counted before it stops: the rebalance can end before its process has exited.
    const assignmentsBefore = [kcat.assignments.length, confluent.assignments.length];
    assert.equal(await kafkaPython.stop(), 0);
    await waitUntil(
      () =>
        kcat.assignments.length > assignmentsBefore[0]! &&
        confluent.assignments.length > assignmentsBefore[1]! &&
        coversExactly([kcat, confluent], PARTITIONS),
      30_000,
      describeAll,
    );

    // kcat crashes: only its session timeout tells the coordinator, then confluent-kafka owns everything.
    const before = confluent.assignments.length;
    await kcat.kill();
    await waitUntil(
      () => confluent.assignments.length > before && confluent.latestAssignment.length === PARTITIONS,
      30_000,
      describeAll,
    );
    const second = await produce('two');
    const consumedSecond = () => confluent.records.filter((r) => r.value.startsWith('two-'));
    await waitUntil(
      () => new Set(consumedSecond().map((r) => r.value)).size === second.length,
      30_000,
      describeAll,
    );
    assert.equal(consumedSecond().length, second.length, 'the survivor consumed each new record once');
    assert.equal(await confluent.stop(), 0);
  });
});
