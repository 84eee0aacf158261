// ControllerRequests, what a broker does with the controller's LeaderAndIsr and StopReplica: after either, the
// broker is told which partitions changed (onReplicasChanged), so that a replica removed by a reassignment or a
// topic deletion stops fetching instead of polling its old leader with a stale epoch for ever, and acks=all
// produces waiting on a partition this broker no longer leads end. After an UpdateMetadata, the group coordinator
// is told the partitions it marked deleted.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ControllerRequests } from '../../src/broker/cluster/controller-requests.js';
import { staticOnly } from '../../src/broker/config/config-layers.js';
import { MetadataCache } from '../../src/broker/metadata/metadata-cache.js';
import type { ReplicaManager } from '../../src/broker/replica/replica-manager.js';
import { TopicConfigs } from '../../src/broker/topic-configs.js';
import { InProcessStore } from '../../src/controller/store/in-process-store.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { encodeEntityConfig, ensurePath, topicConfigPath } from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { LeaderAndIsrRequest } from '../../src/protocol/messages/04-leader-and-isr.js';
import type { StopReplicaRequest } from '../../src/protocol/messages/05-stop-replica.js';
import type { UpdateMetadataRequest } from '../../src/protocol/messages/06-update-metadata.js';

function stopReplica(brokerEpoch: bigint): StopReplicaRequest {
  return {
    controllerId: 1,
    isKRaftController: false,
    controllerEpoch: 1,
    brokerEpoch,
    deletePartitions: true,
    ungroupedPartitions: [],
    topics: [],
    topicStates: [
      { topicName: 't', partitionStates: [{ partitionIndex: 0, leaderEpoch: 3, deletePartition: true }] },
    ],
  };
}

test('a StopReplica that was applied makes the replica fetchers look again; a stale one does not', async () => {
  const stopped: StopReplicaRequest[] = [];
  const replicas = {
    stopReplicas(request: StopReplicaRequest) {
      stopped.push(request);
      return {
        errorCode: ErrorCode.NONE,
        partitionErrors: [{ topicName: 't', partitionIndex: 0, errorCode: ErrorCode.NONE }],
      };
    },
  } as unknown as ReplicaManager;
  const requests = new ControllerRequests(
    {} as CoordinationStore,
    {} as MetadataCache,
    replicas,
    {} as TopicConfigs,
  );
  requests.brokerEpoch = 10;
  let refreshed = 0;
  const told: string[][] = [];
  requests.onReplicasChanged = (keys) => {
    refreshed++;
    told.push([...keys]);
  };

  const applied = await requests.stopReplica(stopReplica(10n));
  assert.equal(applied.errorCode, ErrorCode.NONE);
  assert.equal(stopped.length, 1);
  assert.equal(refreshed, 1, 'the fetchers were told');
  assert.deepEqual(told, [['t-0']], 'with the partitions stopped (their waiting produces end)');

  const stale = await requests.stopReplica(stopReplica(9n));
  assert.equal(stale.errorCode, ErrorCode.STALE_BROKER_EPOCH);
  assert.equal(stopped.length, 1);
  assert.equal(refreshed, 1, 'nothing changed, nothing to tell');
});

function leaderAndIsr(topic: string): LeaderAndIsrRequest {
  return {
    controllerId: 1,
    isKRaftController: false,
    controllerEpoch: 1,
    brokerEpoch: -1n,
    type: 0,
    ungroupedPartitionStates: [],
    topicStates: [{ topicName: topic, topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitionStates: [] }],
    liveLeaders: [],
  };
}

// A broker cut off ZooKeeper still gets its own controller's requests. Its read of a topic's config then fails;
// taken as "no overrides", it put the topic on the broker's defaults (a lower min.insync.replicas, delete instead
// of compact) until the next request.
/** A replica manager that applies every LeaderAndIsr it is given, each kept in `applied`. */
function applyingReplicas(applied: LeaderAndIsrRequest[]): ReplicaManager {
  return {
    becomeLeaderOrFollower(request: LeaderAndIsrRequest) {
      applied.push(request);
      return { errorCode: ErrorCode.NONE, partitionErrors: [], topics: [] };
    },
    whenLogsDurable: () => Promise.resolve(),
    refreshSettings: () => {},
    deleteStrayReplicas: () => [],
  } as unknown as ReplicaManager;
}

test('a topic config read that fails keeps the overrides known, or fails the request to be sent again', async () => {
  const store = InProcessStore.open({ dataDir: null });
  const session = store.openSession();
  const path = topicConfigPath('t');
  assert.ok((await ensurePath(session, path.slice(0, path.lastIndexOf('/')))).ok);
  assert.ok(
    (
      await session.create(
        path,
        encodeEntityConfig({ 'min.insync.replicas': '2', 'cleanup.policy': 'compact' }),
      )
    ).ok,
  );
  const topicConfigs = new TopicConfigs(staticOnly(new Map()));
  const applied: LeaderAndIsrRequest[] = [];
  const replicas = applyingReplicas(applied);
  const requests = new ControllerRequests(session, {} as MetadataCache, replicas, topicConfigs);

  assert.equal((await requests.leaderAndIsr(leaderAndIsr('t'))).errorCode, ErrorCode.NONE);
  assert.equal(topicConfigs.settingsFor('t').minInsyncReplicas, 2);

  await session.close();
  // Known overrides stay. Before the fix they were replaced by none: min.insync.replicas 1, cleanup.policy delete.
  assert.equal((await requests.leaderAndIsr(leaderAndIsr('t'))).errorCode, ErrorCode.NONE);
  assert.equal(topicConfigs.settingsFor('t').minInsyncReplicas, 2);
  assert.deepEqual(Object.fromEntries(topicConfigs.overridesFor('t')), {
    'min.insync.replicas': '2',
    'cleanup.policy': 'compact',
  });
  assert.equal(applied.length, 2);
  // A topic whose config was never read: the request is refused with a retriable error and not applied.
  const refused = await requests.leaderAndIsr(leaderAndIsr('u'));
  assert.equal(refused.errorCode, ErrorCode.REQUEST_TIMED_OUT);
  assert.equal(applied.length, 2);
  assert.equal(topicConfigs.hasOverrides('u'), false);
  store.close();
});

// A config document with a value that is not a string: Kafka's ConfigEntityZNode.decode throws, in createLog for a
// LeaderAndIsr (the whole request fails, UNKNOWN_SERVER_ERROR, which its controller logs and does not send again);
// its UpdateMetadata reads no config. Before, the document counted as no overrides (a compacted topic on delete).
test('a topic config document refused keeps the overrides known, or fails a LeaderAndIsr without a retry', async () => {
  const store = InProcessStore.open({ dataDir: null });
  const session = store.openSession();
  for (const topic of ['t', 'u']) {
    const path = topicConfigPath(topic);
    assert.ok((await ensurePath(session, path.slice(0, path.lastIndexOf('/')))).ok);
    assert.ok((await session.create(path, encodeEntityConfig({ 'cleanup.policy': 'compact' }))).ok);
  }
  const topicConfigs = new TopicConfigs(staticOnly(new Map()));
  const applied: LeaderAndIsrRequest[] = [];
  const replicas = applyingReplicas(applied);
  const metadata = new MetadataCache('cluster');
  const requests = new ControllerRequests(session, metadata, replicas, topicConfigs);
  assert.equal((await requests.leaderAndIsr(leaderAndIsr('t'))).errorCode, ErrorCode.NONE);

  const bad = new TextEncoder().encode('{"version":1,"config":{"cleanup.policy":"delete","retention.ms":1}}');
  for (const topic of ['t', 'u']) assert.ok((await session.set(topicConfigPath(topic), bad, -1)).ok);
  assert.equal((await requests.leaderAndIsr(leaderAndIsr('t'))).errorCode, ErrorCode.NONE);
  assert.deepEqual(Object.fromEntries(topicConfigs.overridesFor('t')), { 'cleanup.policy': 'compact' });
  assert.equal(applied.length, 2);

  const refused = await requests.leaderAndIsr(leaderAndIsr('u'));
  assert.equal(refused.errorCode, ErrorCode.UNKNOWN_SERVER_ERROR);
  assert.equal(applied.length, 2);
  assert.equal(topicConfigs.hasOverrides('u'), false);
  assert.equal((await requests.updateMetadata(updateMetadata('u', 1))).errorCode, ErrorCode.NONE);
  await session.close();
  store.close();
});

function updateMetadata(topic: string, leader: number): UpdateMetadataRequest {
  return {
    controllerId: 1,
    isKRaftController: false,
    type: 0,
    controllerEpoch: 1,
    brokerEpoch: -1n,
    ungroupedPartitionStates: [],
    topicStates: [
      {
        topicName: topic,
        topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
        partitionStates: [0, 1].map((partitionIndex) => ({
          topicName: topic,
          partitionIndex,
          controllerEpoch: 1,
          leader,
          leaderEpoch: 0,
          isr: [1],
          zkVersion: 0,
          replicas: [1],
          offlineReplicas: [],
        })),
      },
    ],
    liveBrokers: [],
  };
}

// The controller may mark a topic deleted (leader -2) in several UpdateMetadata requests while the deletion goes on;
// the group coordinator goes through every group's offsets for each call, so only the first one calls it.
test('partitions marked deleted are told once, while the metadata still shows their topic', async () => {
  const store = InProcessStore.open({ dataDir: null });
  const session = store.openSession();
  const metadata = new MetadataCache('cluster');
  const replicas = { deleteStrayReplicas: () => [], refreshSettings: () => {} } as unknown as ReplicaManager;
  const requests = new ControllerRequests(
    session,
    metadata,
    replicas,
    new TopicConfigs(staticOnly(new Map())),
  );
  const told: string[][] = [];
  requests.onPartitionsDeleted = (partitions) =>
    told.push(partitions.map((p) => `${p.topic}-${p.partition}`));

  assert.equal((await requests.updateMetadata(updateMetadata('t', 1))).errorCode, ErrorCode.NONE);
  assert.deepEqual(told, []);
  assert.equal((await requests.updateMetadata(updateMetadata('t', -2))).errorCode, ErrorCode.NONE);
  assert.deepEqual(told, [['t-0', 't-1']]);
  // Before: told [t-0, t-1] again.
  assert.equal((await requests.updateMetadata(updateMetadata('t', -2))).errorCode, ErrorCode.NONE);
  assert.deepEqual(told, [['t-0', 't-1']]);
  await session.close();
  store.close();
});
