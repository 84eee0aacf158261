// The KIP-848 consumer group protocol through a real client: @platformatic/kafka with groupProtocol 'consumer'
// (ConsumerGroupHeartbeat). Three members split a 6-partition topic by the broker's assignment, consume every
// record once, and when one leaves the other two take its partitions; ConsumerGroupDescribe shows the group.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Admin, Producer, stringSerializers } from '@platformatic/kafka';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';
import {
  consumedInPhase,
  type PlatformaticMember,
  sendPhase,
  startPlatformaticMember,
} from './platformatic-members.js';

const OVERRIDES = {
  'group.coordinator.rebalance.protocols': 'classic,consumer',
  'group.consumer.min.heartbeat.interval.ms': 500,
  'group.consumer.heartbeat.interval.ms': 500,
  'group.consumer.min.session.timeout.ms': 6000,
  'group.consumer.session.timeout.ms': 6000,
};

describe('KIP-848 consumer groups with @platformatic/kafka', () => {
  let broker: BrokerProcess;
  const members: PlatformaticMember[] = [];
  const dataDirs: string[] = [];
  before(async () => {
    broker = await startBroker({ overrides: OVERRIDES, keepDataDir: true });
    dataDirs.push(broker.dataDir);
  });
  after(async () => {
    for (const m of members) await m.close().catch(() => {});
    await broker?.stop();
    for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
  });

  async function startMember(): Promise<PlatformaticMember> {
    const member = await startPlatformaticMember({
      bootstrap: broker.bootstrap,
      clientId: 'groups-kip848',
      groupId: 'k848-group',
      topic: 'k848',
      consumer: { groupProtocol: 'consumer' },
    });
    members.push(member);
    return member;
  }

  const mine = (m: PlatformaticMember) => (m.consumer.assignments ?? []).flatMap((a) => a.partitions).sort();
  const covers = (ms: readonly PlatformaticMember[]) => {
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
      // One record per partition first, so that every member's first fetch position comes from a real offset.
      await producer.send({
        messages: Array.from({ length: 6 }, (_, p) => ({ topic: 'k848', value: `zero-${p}`, partition: p })),
      });
      const group = [await startMember(), await startMember(), await startMember()];
      const show = () => JSON.stringify(group.map(mine));
      await waitUntil(() => covers(group), 30_000, show);
      await sleep(1500);
      const first = await sendPhase(producer, 'k848', 'one');
      const seen = () => consumedInPhase(group, 'one');
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
      await sleep(1500);
      const second = await sendPhase(producer, 'k848', 'two');
      const restSeen = () => consumedInPhase(rest, 'two');
      await waitUntil(() => new Set(restSeen()).size === second.length, 20_000, show);
      assert.equal(restSeen().length, second.length);
    } finally {
      wire.close();
      await producer.close();
      await admin.close();
    }
  });
  it('the group epoch and committed offsets survive a broker restart', { timeout: 60_000 }, async () => {
    // The members of the first test leave first, so that the records below are for the group after the restart.
    for (const m of members.splice(0)) await m.close();
    const producer = new Producer({
      clientId: 'groups-kip848',
      bootstrapBrokers: [broker.bootstrap],
      serializers: stringSerializers,
    });
    await producer.send({
      messages: Array.from({ length: 12 }, (_, i) => ({ topic: 'k848', value: `r-${i}`, partition: i % 6 })),
    });
    await producer.close();
    const describe = async () => {
      const wire = await WireClient.connect(broker.host, broker.port);
      try {
        for (let i = 0; ; i++) {
          const r = await wire.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, {
            groupIds: ['k848-group'],
            includeAuthorizedOperations: false,
          });
          if (r.groups[0].errorCode === 0 || i > 50) return r.groups[0];
          await sleep(100);
        }
      } finally {
        wire.close();
      }
    };
    const before = await describe();
    assert.equal(before.groupState, 'Empty');
    await broker.stop();
    broker = await startBroker({ overrides: OVERRIDES, dataDir: broker.dataDir });
    const after = await describe();
    assert.equal(after.errorCode, 0);
    assert.equal(after.groupEpoch, before.groupEpoch, 'the group epoch was loaded from the log');
    const member = await startMember();
    await waitUntil(
      () => member.values.length >= 12,
      30_000,
      () => JSON.stringify(member.values),
    );
    await sleep(500);
    assert.deepEqual(
      member.values.map((v) => v.value).sort(),
      Array.from({ length: 12 }, (_, i) => `r-${i}`).sort(),
      'only the records after the committed offsets',
    );
  });
});
