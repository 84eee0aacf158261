// What a stopping broker does with the controller's LeaderAndIsr, wired as broker.ts wires it (ControllerRequests
// -> ReplicaManager -> ReplicaFetchers.refresh): once its stop has begun it starts no fetcher and takes no
// leadership, and after stop() nothing fetches again. A fetcher started then would keep the process alive after
// shutdown (its loop polls a leader for ever), which is how a whole cluster stopped at once could leave a broker
// hanging.

import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { ControllerRequests } from '../../src/broker/cluster/controller-requests.js';
import { ReplicaFetchers } from '../../src/broker/cluster/replica-fetchers.js';
import { staticOnly } from '../../src/broker/config/config-layers.js';
import type { MetadataCache } from '../../src/broker/metadata/metadata-cache.js';
import { ReplicaManager } from '../../src/broker/replica/replica-manager.js';
import { TopicConfigs } from '../../src/broker/topic-configs.js';
import { ManualClock } from '../../src/common/clock.js';
import type { BrokerId } from '../../src/common/ids.js';
import { silentLogger } from '../../src/common/logger.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { LeaderAndIsrRequest } from '../../src/protocol/messages/04-leader-and-isr.js';
import { logConfig } from '../../src/storage/log-config.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { deferCleanup, tempDir } from '../storage/tmp-dir.js';

const BROKER = 0 as BrokerId;
const TOPIC_ID = 'ASNFZ4mrze8BI0VniavN7w';

/** One LeaderAndIsr for partitions of topic t, each [partition, leader, leaderEpoch], replicas 0, 1, 2. */
function leaderAndIsr(...states: [number, number, number][]): LeaderAndIsrRequest {
  return {
    controllerId: 1,
    isKRaftController: false,
    controllerEpoch: 1,
    brokerEpoch: 10n,
    type: 0,
    ungroupedPartitionStates: [],
    topicStates: [
      {
        topicName: 't',
        topicId: TOPIC_ID,
        partitionStates: states.map(([partitionIndex, leader, leaderEpoch]) => ({
          topicName: 't',
          partitionIndex,
          controllerEpoch: 1,
          leader,
          leaderEpoch,
          isr: [0, 1, 2],
          partitionEpoch: leaderEpoch,
          replicas: [0, 1, 2],
          addingReplicas: [],
          removingReplicas: [],
          isNew: false,
          leaderRecoveryState: 0,
        })),
      },
    ],
    liveLeaders: [],
  };
}

function errorOf(response: Awaited<ReturnType<ControllerRequests['leaderAndIsr']>>, partition: number) {
  return response.topics[0]?.partitionErrors.find((p) => p.partitionIndex === partition)?.errorCode;
}

/** A broker's replica side on a real log directory; the fetchers' only view of the cluster records its asks. */
function brokerReplicas(t: TestContext) {
  const clock = new ManualClock();
  const logs = LogManager.open({ dir: tempDir(t, 'brook-shutdown-'), clock, configFor: () => logConfig() });
  deferCleanup(t, () => logs.shutdown());
  const topicConfigs = new TopicConfigs(staticOnly(new Map()));
  const replicas = new ReplicaManager(BROKER, logs, topicConfigs, silentLogger, () => logConfig());
  // A started fetcher asks for its leader's endpoint at once; none is known, so it waits backoffMs and asks again.
  const endpointAsked: number[] = [];
  const metadata = {
    endpointFor(brokerId: number) {
      endpointAsked.push(brokerId);
      return undefined;
    },
  } as unknown as MetadataCache;
  const fetchers = new ReplicaFetchers(
    {
      brokerId: BROKER,
      listenerName: 'PLAINTEXT',
      fetchMaxBytes: 1 << 20,
      responseMaxBytes: 10 << 20,
      waitMaxMs: 100,
      minBytes: 1,
      backoffMs: 20,
      socketTimeoutMs: 1000,
    },
    replicas,
    metadata,
    () => {},
    silentLogger,
  );
  deferCleanup(t, () => fetchers.stop());
  const store = { get: async () => ({ ok: false, code: 'NONODE' }) } as unknown as CoordinationStore;
  const requests = new ControllerRequests(store, {} as MetadataCache, replicas, topicConfigs);
  requests.brokerEpoch = 10;
  requests.onReplicasChanged = () => fetchers.refresh();
  return { replicas, fetchers, requests, endpointAsked };
}

test('a LeaderAndIsr that arrives after the replica fetchers stopped starts no fetcher', async (t) => {
  const { fetchers, requests, endpointAsked, replicas } = brokerReplicas(t);
  await requests.leaderAndIsr(leaderAndIsr([0, 1, 1]));
  assert.deepEqual(fetchers.leaderIds, [1], 'a follower fetches from its leader');
  assert.ok(endpointAsked.includes(1));

  fetchers.stop();
  // A controller elected while this broker stops makes it a follower of partitions led by broker 2.
  const response = await requests.leaderAndIsr(leaderAndIsr([0, 2, 2], [1, 2, 2]));
  assert.equal(errorOf(response, 0), ErrorCode.NONE);
  assert.equal(replicas.get('t', 1)?.leaderId, 2, 'the request was applied');
  assert.deepEqual(fetchers.leaderIds, []);
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(!endpointAsked.includes(2), 'no fetcher ever looked for broker 2');
});

test('once the stop began, a LeaderAndIsr makes followers without fetching and gives no new leadership', async (t) => {
  const { fetchers, requests, endpointAsked, replicas } = brokerReplicas(t);
  // Before: partitions 0 and 1 followed from broker 1, partition 3 led here.
  await requests.leaderAndIsr(leaderAndIsr([0, 1, 1], [1, 1, 1], [3, BROKER, 1]));
  assert.deepEqual(fetchers.leaderIds, [1]);

  replicas.beginShutdown();
  fetchers.beginShutdown();
  const response = await requests.leaderAndIsr(
    leaderAndIsr([0, 2, 2], [1, BROKER, 2], [2, BROKER, 1], [3, BROKER, 2], [4, 2, 1]),
  );
  assert.equal(errorOf(response, 0), ErrorCode.NONE);
  assert.equal(replicas.get('t', 0)?.leaderId, 2, 'partition 0 follows its new leader...');
  assert.equal(errorOf(response, 4), ErrorCode.NONE);
  assert.equal(replicas.get('t', 4)?.leaderId, 2, '...and so does the new partition 4');
  assert.equal(
    errorOf(response, 1),
    ErrorCode.BROKER_NOT_AVAILABLE,
    'a followed partition is not taken over',
  );
  assert.equal(replicas.get('t', 1)?.leaderId, 1);
  assert.equal(errorOf(response, 2), ErrorCode.BROKER_NOT_AVAILABLE, 'a new partition is not led');
  assert.equal(replicas.get('t', 2), undefined);
  assert.equal(errorOf(response, 3), ErrorCode.NONE, 'a partition led already takes its new epoch');
  assert.equal(replicas.get('t', 3)?.leaderEpoch, 2);
  assert.equal(replicas.get('t', 3)?.isLeader, true);
  assert.deepEqual(fetchers.leaderIds, [1], 'partition 1 is still fetched from broker 1, nothing from 2');

  await requests.leaderAndIsr(leaderAndIsr([1, 2, 3]));
  assert.deepEqual(fetchers.leaderIds, [], 'the fetcher with nothing left to fetch ended');
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(!endpointAsked.includes(2), 'no fetcher ever looked for broker 2');
});
