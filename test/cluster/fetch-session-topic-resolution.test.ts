// A partition added to a fetch session (Fetch v13+, by topic id) before its broker knows that topic id is answered
// UNKNOWN_TOPIC_ID, and read as soon as the broker learns the id: Kafka's IncrementalFetchContext looks the names
// of a session's unresolved partitions up again on every fetch (CachedPartition.maybeResolveUnknownName). The
// client does not send such a partition again while its position is unchanged (the Java client sends only the
// partitions that changed), so a broker that kept the partition unresolved answered UNKNOWN_TOPIC_ID forever.
//
// How a client gets there: it learns a new topic's id from a broker the controller's UpdateMetadata reached, and
// fetches from the leader before the leader's UpdateMetadata has come (the leader already hosts the partition:
// LeaderAndIsr comes first). Two brokers in this process share a ZooKeeper; the leader, not the controller's broker,
// holds the UpdateMetadata requests that name the new topic until the test lets them through.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { UpdateMetadataRequest } from '../../src/protocol/messages/06-update-metadata.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { agreedController, waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, onKey, startInProcessBroker } from '../helpers/in-process-broker.js';
import {
  consumerFetchBody,
  createTopic,
  fetchPartition,
  produceBatch,
  WireClient,
} from '../helpers/wire-client.js';
import { startTestZooKeeper } from '../helpers/zookeeper.js';

const NO_ID = 'AAAAAAAAAAAAAAAAAAAAAA';
const WARM = 'resolution-warm';
const FRESH = 'resolution-fresh';

/** A consumer's Fetch v13 of partition 0 of each topic id at offset 0, with the session fields given. */
function fetchById(topicIds: readonly string[], sessionId: number, sessionEpoch: number) {
  const topics = topicIds.map((topicId) => ({ topicId, partitions: [fetchPartition(0, 0)] }));
  return consumerFetchBody(topics, { minBytes: 0, sessionId, sessionEpoch });
}

/** The topic's id in `client`'s broker's metadata; undefined while that broker does not know the topic. */
async function topicIdOn(client: WireClient, topic: string): Promise<string | undefined> {
  const md = await client.call(ApiKey.METADATA, 12, {
    topics: [{ topicId: NO_ID, name: topic }],
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  });
  return md.topics[0].errorCode === ErrorCode.NONE ? md.topics[0].topicId : undefined;
}

function namesTopic(request: UpdateMetadataRequest, topic: string): boolean {
  return (
    request.topicStates.some((t) => t.topicName === topic) ||
    request.ungroupedPartitionStates.some((p) => p.topicName === topic)
  );
}

it('a session partition of a topic id the broker learns later is read once it knows the id', async () => {
  const zk = await startTestZooKeeper();
  const brokers: InProcessBroker[] = [];
  const clients: WireClient[] = [];
  let release = (): void => {};
  try {
    for (const id of [0, 1]) {
      brokers.push(await startInProcessBroker({ 'broker.id': id, 'zookeeper.connect': zk.connect }));
    }
    const controllerId = await agreedController(brokers);
    // The controller's own broker gets its metadata by direct calls; the other one over the wire, which its
    // interceptor sees.
    const leaderId = 1 - controllerId;
    const controller = await WireClient.connect(brokers[controllerId]!.host, brokers[controllerId]!.port);
    const leader = await WireClient.connect(brokers[leaderId]!.host, brokers[leaderId]!.port);
    clients.push(controller, leader);

    await createTopic(controller, WARM, { assignments: { 0: [leaderId] } });
    const warmId = await waitFor(`${WARM} known to the leader`, () => topicIdOn(leader, WARM));
    const full = await leader.call(ApiKey.FETCH, 13, fetchById([warmId], 0, 0));
    assert.equal(full.responses[0].partitions[0].errorCode, ErrorCode.NONE);
    const sessionId: number = full.sessionId;
    assert.ok(sessionId > 0, 'the full fetch opened a session');

    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = 0;
    brokers[leaderId]!.interception.set(
      onKey<UpdateMetadataRequest>(ApiKey.UPDATE_METADATA, async (request) => {
        if (!namesTopic(request.body, FRESH)) return request.handle();
        held++;
        await released;
        return request.handle();
      }),
    );
    const created = await controller.call(ApiKey.CREATE_TOPICS, 5, {
      topics: [
        {
          name: FRESH,
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [{ partitionIndex: 0, brokerIds: [leaderId] }],
          configs: [],
        },
      ],
      timeoutMs: 0,
      validateOnly: false,
    });
    assert.ok(
      [ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT].includes(created.topics[0].errorCode),
      `CreateTopics answered ${created.topics[0].errorCode}`,
    );
    const freshId = await waitFor(`${FRESH} known to the controller's broker`, () =>
      topicIdOn(controller, FRESH),
    );
    // The leader hosts the partition (LeaderAndIsr) and takes writes, but its metadata does not know the topic yet.
    await waitFor(`${FRESH} led by broker ${leaderId}`, async () => {
      const r = await produceBatch(leader, FRESH, buildBatch([{ value: 'first' }]));
      return r.errorCode === ErrorCode.NONE ? true : undefined;
    });
    // The controller sends a broker its requests one at a time, UpdateMetadata after the LeaderAndIsr is answered:
    // the leader can take the write before the UpdateMetadata reaches it (on a loaded machine it often does).
    await waitFor('the UpdateMetadata naming the new topic held at the leader', async () =>
      held > 0 ? true : undefined,
    );
    assert.equal(await topicIdOn(leader, FRESH), undefined);

    // The consumer adds the partition to its session by the id the other broker gave it.
    const added = await leader.call(ApiKey.FETCH, 13, fetchById([freshId], sessionId, 1));
    assert.equal(added.errorCode, ErrorCode.NONE);
    const unknown = added.responses.find((t: { topicId: string }) => t.topicId === freshId);
    assert.equal(unknown?.partitions[0].errorCode, ErrorCode.UNKNOWN_TOPIC_ID);

    release();
    await waitFor(`${FRESH} known to the leader`, () => topicIdOn(leader, FRESH));
    // Its position unchanged, the consumer's next fetches name nothing; the session's partition is read now.
    const later = await leader.call(ApiKey.FETCH, 13, fetchById([], sessionId, 2));
    assert.equal(later.errorCode, ErrorCode.NONE);
    const fresh = later.responses.find((t: { topicId: string }) => t.topicId === freshId);
    assert.ok(fresh !== undefined, 'the partition is answered');
    assert.equal(fresh.partitions[0].errorCode, ErrorCode.NONE);
    assert.ok(fresh.partitions[0].records.length > 0, 'with its record');
  } finally {
    release();
    for (const c of clients) c.close();
    for (const b of brokers.reverse()) await b.stop().catch(() => {});
    await zk.stop();
  }
});
