// The controller's unclean election reads a topic's config document as Kafka's getLogConfigs does
// (ConfigEntityZNode.decode), over a real ZooKeeper: a document whose version is not 1 still says what it says, and
// one whose value is not a string (decode throws there) allows no unclean election. Brokers 1..3 are sessions of
// their own, broker 1's controller runs with unclean.leader.election.enable=true as the broker default, and each
// topic's only in-sync replica (broker 2) dies while its other replica (broker 3) is out of sync.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import { registerBroker } from '../../src/controller/broker-registration.js';
import { Controller } from '../../src/controller/controller.js';
import { seededRandom } from '../../src/controller/random.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { TopicAdmin } from '../../src/controller/topic-admin.js';
import {
  decodePartitionState,
  partitionStatePath,
  topicConfigPath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { untilValue } from '../helpers/wait.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import { isrChange, liveEpoch, RecordingChannel, registration, settle } from './helpers.js';

/** Topic name to the document its /config/topics node holds. */
const DOCUMENTS = {
  'version-two': '{"version":2,"config":{"unclean.leader.election.enable":"false"}}',
  'no-version': '{"config":{"unclean.leader.election.enable":"false"}}',
  'not-a-string': '{"version":1,"config":{"unclean.leader.election.enable":true}}',
};
const TOPICS = Object.keys(DOCUMENTS) as (keyof typeof DOCUMENTS)[];

describe('unclean leader election over a topic config document Kafka reads leniently', () => {
  let server: TestZooKeeper;
  const sessions: CoordinationStore[] = [];
  let controller: Controller | undefined;

  before(async () => {
    server = await startTestZooKeeper();
  });
  after(async () => {
    await controller?.stop();
    for (const s of sessions) await s.close();
    await server?.stop();
  });

  const session = async (): Promise<CoordinationStore> => {
    const opened = await connectZooKeeper({ connect: server.connect, sessionTimeoutMs: 4000 });
    assert.ok(opened.ok, 'connected to ZooKeeper');
    sessions.push(opened.value);
    return opened.value;
  };

  it('elects no out-of-sync replica when the document says false or cannot be read', async () => {
    const stores = new Map<number, CoordinationStore>();
    for (const id of [1, 2, 3]) {
      const s = await session();
      assert.ok((await registerBroker(s, registration(id), seededRandom(id))).ok);
      stores.set(id, s);
    }
    controller = new Controller({
      brokerId: 1 as BrokerId,
      store: stores.get(1)!,
      channel: new RecordingChannel(),
      random: seededRandom(1),
      uncleanLeaderElectionEnable: true,
    });
    await controller.start();
    const observer = await session();
    const admin = new TopicAdmin({
      store: observer,
      defaults: { numPartitions: 1, replicationFactor: 2, deleteTopicEnable: true },
      random: seededRandom(9),
    });
    const created = await admin.createTopics(
      TOPICS.map((name) => ({
        name,
        numPartitions: -1,
        replicationFactor: -1,
        assignments: [{ partitionIndex: 0, brokerIds: [2, 3] }],
        configs: {},
      })),
      false,
    );
    assert.deepEqual(
      created.map((c) => c.errorCode),
      TOPICS.map(() => ErrorCode.NONE),
    );
    const state = async (topic: string) => {
      const node = await observer.get(partitionStatePath(topic, 0 as never));
      if (!node.ok) return null;
      const decoded = decodePartitionState(node.value.data);
      assert.ok(decoded.ok);
      return decoded.value;
    };
    for (const topic of TOPICS) {
      await untilValue(`a leader for ${topic}`, async () =>
        (await state(topic))?.leader === 2 ? true : null,
      );
      const data = new TextEncoder().encode(DOCUMENTS[topic]);
      const written = await observer.set(topicConfigPath(topic), data, -1);
      if (!written.ok) assert.ok((await observer.create(topicConfigPath(topic), data)).ok, topic);
    }
    await settle(controller);
    // Broker 3 falls out of the ISR of every topic, then broker 2, their only in-sync replica, dies.
    const shrunk = await controller.alterPartition(
      {
        brokerId: 2,
        brokerEpoch: liveEpoch(controller, 2),
        topics: TOPICS.map((topicName) => ({
          topicName,
          topicId: '',
          partitions: [isrChange(0, 0, 0, [2])],
        })),
      },
      2,
    );
    for (const t of shrunk.topics) assert.equal(t.partitions[0]?.errorCode, ErrorCode.NONE, t.topicName);
    await stores.get(2)!.close();
    for (const topic of TOPICS) {
      const after = await untilValue(`broker 2 no longer leads ${topic}`, async () => {
        const s = await state(topic);
        return s !== null && s.leader !== 2 ? s : null;
      });
      assert.equal(after.leader, -1, `${topic} (${DOCUMENTS[topic]}) got no unclean leader`);
      assert.deepEqual(after.isr, [2], `${topic} keeps its last in-sync replica`);
    }
  });
});
