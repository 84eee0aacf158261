// ControllerRequests, what a broker does with the controller's LeaderAndIsr and StopReplica: after either, the
// broker is told which partitions changed (onReplicasChanged), so that a replica removed by a reassignment or a
// topic deletion stops fetching instead of polling its old leader with a stale epoch for ever, and acks=all
// produces waiting on a partition this broker no longer leads end.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ControllerRequests } from '../../src/broker/cluster/controller-requests.js';
import type { MetadataCache } from '../../src/broker/metadata/metadata-cache.js';
import type { ReplicaManager } from '../../src/broker/replica/replica-manager.js';
import type { TopicConfigs } from '../../src/broker/topic-configs.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { StopReplicaRequest } from '../../src/protocol/messages/05-stop-replica.js';

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
