// confluent-kafka-python (librdkafka) against Brook's coordinator beyond the basics: static membership (KIP-345)
// lets a crashed member come back under its group.instance.id within its session timeout and get its partitions
// back without a rebalance of the others; the cooperative-sticky assignor (incremental rebalancing, done by the
// clients over the classic protocol) moves only what must move; auto.offset.reset=none (librdkafka's "error",
// kafka-python's "none") reports the missing offset instead of guessing one; latest (kcat -G) skips older records.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { coversExactly, GroupMember } from '../coordinator/group-members.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';

const { Kafka, logLevel } = kafkajs;

describe('static membership, cooperative rebalancing and reset=none with confluent-kafka-python and kafka-python', () => {
  let broker: BrokerProcess;
  const members: GroupMember[] = [];
  before(async () => {
    broker = await startBroker();
    const kafka = new Kafka({
      clientId: 'groups-static',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: ['static', 'coop', 'none'].map((topic) => ({ topic, numPartitions: 6 })),
      waitForLeaders: true,
    });
    await admin.disconnect();
  });
  after(async () => {
    for (const m of members) await m.kill();
    await broker?.stop();
  });
  const show = () => members.map((m) => `${m.name}: ${JSON.stringify(m.assignments)}\n${m.log()}`).join('\n');

  it('a static member restarted within its session gets its partitions back without a rebalance', {
    timeout: 60_000,
  }, async () => {
    const start = (id: string) => {
      const m = GroupMember.python(
        'confluent',
        broker.bootstrap,
        'static-group',
        'static',
        'earliest',
        20_000,
        {
          groupInstanceId: id,
        },
      );
      members.push(m);
      return m;
    };
    const a = start('instance-a');
    const b = start('instance-b');
    await waitUntil(() => a.latestAssignment.length === 3 && coversExactly([a, b], 6), 30_000, show);
    const bAssignments = b.assignments.length;
    const before = a.latestAssignment;
    await a.kill();
    const again = start('instance-a');
    await waitUntil(() => again.assignments.length > 0, 20_000, show);
    assert.deepEqual(again.latestAssignment, before, 'the same partitions as before the crash');
    // Give a rebalance, if one were wrongly started, the time to reach b.
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(b.assignments.length, bAssignments, 'the other member was not rebalanced');
  });

  it('cooperative-sticky members move only the partitions that must move', { timeout: 60_000 }, async () => {
    const start = () => {
      const m = GroupMember.python('confluent', broker.bootstrap, 'coop-group', 'coop', 'earliest', 6000, {
        strategy: 'cooperative-sticky',
      });
      members.push(m);
      return m;
    };
    const a = start();
    await waitUntil(() => a.latestAssignment.length === 6, 30_000, show);
    const b = start();
    await waitUntil(() => b.latestAssignment.length === 3 && coversExactly([a, b], 6), 30_000, show);
    // a kept three of its six partitions throughout: it never went through an empty assignment.
    assert.ok(
      a.assignments.every((x) => x.length >= 3),
      JSON.stringify(a.assignments),
    );
  });

  it('auto.offset.reset=none reports a partition without a committed offset', {
    timeout: 60_000,
  }, async () => {
    const kafka = new Kafka({
      clientId: 'groups-static',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
    });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'none', messages: [{ value: 'x', partition: 0 }] });
    await producer.disconnect();
    for (const client of ['confluent', 'kafka-python'] as const) {
      const m = GroupMember.python(client, broker.bootstrap, `none-group-${client}`, 'none', 'none');
      members.push(m);
      await waitUntil(() => m.errors.length > 0, 30_000, show);
      assert.match(m.errors[0]!, /offset/i, client);
      assert.equal(m.records.length, 0, client);
    }
  });
  it('auto.offset.reset=latest with kcat -G skips what was written before it joined', {
    timeout: 60_000,
  }, async () => {
    const kafka = new Kafka({
      clientId: 'groups-static',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
    });
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({
        topic: 'none',
        messages: Array.from({ length: 6 }, (_, p) => ({ value: `early-${p}`, partition: p })),
      });
      const m = GroupMember.kcat(broker.bootstrap, 'latest-group', 'none', 'latest');
      members.push(m);
      await waitUntil(() => m.latestAssignment.length === 6, 30_000, show);
      for (let i = 0; m.records.length === 0; i++) {
        assert.ok(i < 60, 'the latest-reset member consumed nothing');
        await producer.send({ topic: 'none', messages: [{ value: `late-${i}`, partition: i % 6 }] });
        await new Promise((r) => setTimeout(r, 300));
      }
      assert.ok(
        m.records.every((r) => r.value.startsWith('late-')),
        JSON.stringify(m.records),
      );
    } finally {
      await producer.disconnect();
    }
  });
});
