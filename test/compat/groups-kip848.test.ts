// The KIP-848 consumer group protocol through a real client: @platformatic/kafka with groupProtocol 'consumer'
// (ConsumerGroupHeartbeat). Three members split a 6-partition topic by the broker's assignment, consume every
// record once, and when one leaves the other two take its partitions; ConsumerGroupDescribe shows the group.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  Admin,
  Consumer,
  type Message,
  Producer,
  stringDeserializers,
  stringSerializers,
} from '@platformatic/kafka';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { WireClient } from '../helpers/wire-client.js';

interface Member {
  readonly consumer: Consumer<string, string, string, string>;
  readonly values: { partition: number; value: string }[];
  close(): Promise<void>;
}

async function waitUntil(condition: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('KIP-848 consumer groups with @platformatic/kafka', () => {
  let broker: BrokerProcess;
  const members: Member[] = [];
  before(async () => {
    broker = await startBroker({
      overrides: {
        'group.coordinator.rebalance.protocols': 'classic,consumer',
        'group.consumer.min.heartbeat.interval.ms': 500,
        'group.consumer.heartbeat.interval.ms': 500,
        'group.consumer.min.session.timeout.ms': 6000,
        'group.consumer.session.timeout.ms': 6000,
      },
    });
  });
  after(async () => {
    for (const m of members) await m.close().catch(() => {});
    await broker?.stop();
  });

  async function startMember(): Promise<Member> {
    const consumer = new Consumer({
      clientId: 'groups-kip848',
      bootstrapBrokers: [broker.bootstrap],
      groupId: 'k848-group',
      groupProtocol: 'consumer',
      maxWaitTime: 200,
      deserializers: stringDeserializers,
    });
    const values: Member['values'] = [];
    const stream = await consumer.consume({
      topics: ['k848'],
      mode: 'committed',
      fallbackMode: 'earliest',
      autocommit: 100,
    });
    stream.on('data', (message: Message<string, string, string, string>) => {
      values.push({ partition: message.partition, value: message.value });
    });
    const member: Member = {
      consumer,
      values,
      close: async () => {
        await stream.close();
        await consumer.close();
      },
    };
    members.push(member);
    return member;
  }

  const mine = (m: Member) => (m.consumer.assignments ?? []).flatMap((a) => a.partitions).sort();
  const covers = (ms: readonly Member[]) => {
    const all = ms.flatMap(mine);
    return all.length === 6 && new Set(all).size === 6 && ms.every((m) => mine(m).length > 0);
  };

  it('three members split six partitions by the broker assignment; one leaves, two take over', {
    timeout: 60_000,
  }, async () => {
    const admin = new Admin({ clientId: 'groups-kip848', bootstrapBrokers: [broker.bootstrap] });
    await admin.createTopics({ topics: ['k848'], partitions: 6, replicas: 1 });
    const producer = new Producer({
      clientId: 'groups-kip848',
      bootstrapBrokers: [broker.bootstrap],
      serializers: stringSerializers,
    });
    const wire = await WireClient.connect(broker.host, broker.port);
    try {
      // One record per partition first (see groups-platformatic.test.ts: ListOffsets EARLIEST on an empty partition).
      await producer.send({
        messages: Array.from({ length: 6 }, (_, p) => ({ topic: 'k848', value: `zero-${p}`, partition: p })),
      });
      const group = [await startMember(), await startMember(), await startMember()];
      const show = () => JSON.stringify(group.map(mine));
      await waitUntil(() => covers(group), 30_000, show);
      await new Promise((r) => setTimeout(r, 1500));
      const produce = async (phase: string) => {
        const messages = Array.from({ length: 60 }, (_, i) => ({
          topic: 'k848',
          value: `${phase}-${i}`,
          partition: i % 6,
        }));
        await producer.send({ messages });
        return messages.map((m) => m.value);
      };
      const first = await produce('one');
      const seen = () =>
        group.flatMap((m) => m.values.map((v) => v.value)).filter((v) => v.startsWith('one-'));
      await waitUntil(() => new Set(seen()).size === first.length, 20_000, show);
      assert.equal(seen().length, first.length, 'each record consumed once while the assignment holds');

      const described = await wire.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, {
        groupIds: ['k848-group'],
        includeAuthorizedOperations: false,
      });
      const g = described.groups[0];
      assert.equal(g.errorCode, 0);
      assert.equal(g.groupState, 'Stable');
      assert.equal(g.members.length, 3);
      assert.deepEqual(
        g.members
          .flatMap((m: { assignment: { topicPartitions: { partitions: number[] }[] } }) =>
            m.assignment.topicPartitions.flatMap((t) => t.partitions),
          )
          .sort(),
        [0, 1, 2, 3, 4, 5],
      );

      await group[0]!.close();
      members.splice(members.indexOf(group[0]!), 1);
      const rest = group.slice(1);
      await waitUntil(() => covers(rest), 30_000, show);
      await new Promise((r) => setTimeout(r, 1500));
      const second = await produce('two');
      const restSeen = () =>
        rest.flatMap((m) => m.values.map((v) => v.value)).filter((v) => v.startsWith('two-'));
      await waitUntil(() => new Set(restSeen()).size === second.length, 20_000, show);
      assert.equal(restSeen().length, second.length);
    } finally {
      wire.close();
      await producer.close();
      await admin.close();
    }
  });
});
