// @platformatic/kafka consumer groups against a Brook broker (it speaks the newest versions: JoinGroup v9,
// SyncGroup v5, OffsetCommit v9, OffsetFetch v9 and batched FindCoordinator): three members split a 6-partition
// topic and consume every record once, one closes and the other two take over, and its commits are read back.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin, Producer, stringSerializers } from '@platformatic/kafka';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import {
  consumedInPhase,
  type PlatformaticMember,
  sendPhase,
  startPlatformaticMember,
} from './platformatic-members.js';

describe('@platformatic/kafka consumer groups against a Brook broker', () => {
  let broker: BrokerProcess;
  const members: PlatformaticMember[] = [];
  before(async () => {
    broker = await startBroker();
  });
  after(async () => {
    for (const m of members) await m.close().catch(() => {});
    await broker?.stop();
  });

  async function startMember(groupId: string, topic: string): Promise<PlatformaticMember> {
    const member = await startPlatformaticMember({
      bootstrap: broker.bootstrap,
      clientId: 'groups-platformatic',
      groupId,
      topic,
      consumer: { sessionTimeout: 6000, rebalanceTimeout: 10_000, heartbeatInterval: 500 },
    });
    members.push(member);
    return member;
  }

  it('three members split six partitions, one closes and the others take over', {
    timeout: 60_000,
  }, async () => {
    const admin = new Admin({ clientId: 'groups-platformatic', bootstrapBrokers: [broker.bootstrap] });
    await admin.createTopics({ topics: ['plat'], partitions: 6, replicas: 1 });
    const producer = new Producer({
      clientId: 'groups-platformatic',
      bootstrapBrokers: [broker.bootstrap],
      serializers: stringSerializers,
    });
    try {
      // One record per partition first, so that every member's first fetch position comes from a real offset.
      await producer.send({
        messages: Array.from({ length: 6 }, (_, p) => ({ topic: 'plat', value: `zero-${p}`, partition: p })),
      });
      const group = [
        await startMember('plat-group', 'plat'),
        await startMember('plat-group', 'plat'),
        await startMember('plat-group', 'plat'),
      ];
      const show = () => JSON.stringify(group.map((m) => m.assignments));
      const covers = (ms: readonly PlatformaticMember[]) => {
        const all = ms.flatMap((m) => m.assignments.at(-1) ?? []);
        return all.length === 6 && new Set(all).size === 6;
      };
      await waitUntil(
        () => group.every((m) => (m.assignments.at(-1)?.length ?? 0) > 0) && covers(group),
        30_000,
        show,
      );

      // This client refreshes its fetch positions from the committed offsets after each join, and a refresh still
      // queued from an earlier generation can rewind a partition it has just read; let those settle first.
      await sleep(1500);
      const first = await sendPhase(producer, 'plat', 'one');
      const seen = () => consumedInPhase(group, 'one');
      await waitUntil(() => new Set(seen()).size === first.length, 20_000, show);
      const detail = () =>
        JSON.stringify(
          group.map((m) => [
            m.assignments,
            m.values.filter((v) => v.value.startsWith('one-')).map((v) => v.value),
          ]),
        );
      assert.equal(
        seen().length,
        first.length,
        `each record consumed once in a stable generation: ${detail()}`,
      );
      for (const m of group) {
        for (const v of m.values) {
          if (v.value.startsWith('one-')) assert.ok(m.assignments.at(-1)!.includes(v.partition), detail());
        }
      }

      await group[0]!.close();
      const rest = group.slice(1);
      const counts = rest.map((m) => m.assignments.length);
      await waitUntil(
        () => rest.every((m, i) => m.assignments.length > counts[i]!) && covers(rest),
        30_000,
        show,
      );
      await sleep(1500);
      const second = await sendPhase(producer, 'plat', 'two');
      const restSeen = () => consumedInPhase(rest, 'two');
      await waitUntil(() => new Set(restSeen()).size === second.length, 20_000, show);
      assert.equal(restSeen().length, second.length);

      // The commits (autocommit every 100 ms) reach the group's offsets: 21 records in each partition.
      const committed = async () => {
        const offsets = await rest[0]!.consumer.listCommittedOffsets({
          topics: [{ topic: 'plat', partitions: [0, 1, 2, 3, 4, 5] }],
        });
        return (offsets.get('plat') ?? []).reduce((s, o) => s + Number(o), 0);
      };
      let total = 0;
      for (let i = 0; i < 50 && total !== 126; i++) {
        total = await committed();
        if (total !== 126) await sleep(100);
      }
      assert.equal(total, 126);
    } finally {
      await producer.close();
      await admin.close();
    }
  });
});
