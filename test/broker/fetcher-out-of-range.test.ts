// A follower whose log end and high watermark are past the leader's log end, with no leader epoch the leader can
// place (its records carry none, as legacy-format records do): its fetch is answered OFFSET_OUT_OF_RANGE, and
// OffsetForLeaderEpoch answers no end offset, so truncating to the high watermark cut nothing. The fetcher asked
// the same again forever. As Kafka's AbstractFetcherThread.fetchOffsetAndTruncate, it now asks the leader's log
// end (ListOffsets LATEST with the replica id) and truncates to it. Fails before the fix: the follower's log end
// stays at 10 while the fetcher loops.
// Two brokers' real replica sides on real logs; the follower reaches the leader in process (DirectLeaderEndPoint).

import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { ReplicaFetchers } from '../../src/broker/cluster/replica-fetchers.js';
import { staticOnly } from '../../src/broker/config/config-layers.js';
import type { MetadataCache } from '../../src/broker/metadata/metadata-cache.js';
import { Purgatory } from '../../src/broker/purgatory.js';
import { ReplicaManager } from '../../src/broker/replica/replica-manager.js';
import { TopicConfigs } from '../../src/broker/topic-configs.js';
import { ManualClock } from '../../src/common/clock.js';
import { type BrokerId, toOffset } from '../../src/common/ids.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { LeaderAndIsrRequest } from '../../src/protocol/messages/04-leader-and-isr.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { logConfig } from '../../src/storage/log-config.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { DirectLeaderEndPoint, readLog } from '../sim/in-process-leader.js';
import { deferCleanup, tempDir } from '../storage/tmp-dir.js';

/** The leader appends' written outcome: the follower's log end is what these tests watch. */
const ignoreOutcome = (): void => {};

const TOPIC = 't';
const LEADER = 1 as BrokerId;
const FOLLOWER = 2 as BrokerId;
const EPOCH = 7;

function leaderAndIsr(leader: number): LeaderAndIsrRequest {
  return {
    controllerId: 0,
    isKRaftController: false,
    controllerEpoch: 1,
    brokerEpoch: 1n,
    type: 0,
    ungroupedPartitionStates: [],
    topicStates: [
      {
        topicName: TOPIC,
        topicId: '',
        partitionStates: [
          {
            topicName: TOPIC,
            partitionIndex: 0,
            controllerEpoch: 1,
            leader,
            leaderEpoch: EPOCH,
            isr: [LEADER],
            partitionEpoch: 1,
            replicas: [LEADER, FOLLOWER],
            addingReplicas: [],
            removingReplicas: [],
            isNew: false,
            leaderRecoveryState: 0,
          },
        ],
      },
    ],
    liveLeaders: [],
  };
}

function replicaSide(t: TestContext, brokerId: BrokerId, clock: ManualClock) {
  const logs = LogManager.open({
    dir: tempDir(t, `brook-oor-${brokerId}-`),
    clock,
    configFor: () => logConfig(),
  });
  deferCleanup(t, () => logs.shutdown());
  const replicas = new ReplicaManager(
    brokerId,
    logs,
    new TopicConfigs(staticOnly(new Map())),
    silentLogger,
    () => logConfig(),
    clock,
  );
  return { replicas, purgatory: new Purgatory('produce', 10, clock) };
}

async function turnsUntil(condition: () => boolean, turns = 5000): Promise<boolean> {
  for (let i = 0; i < turns && !condition(); i++) await new Promise((r) => setImmediate(r));
  return condition();
}

test('a follower past the leader log end, with no epoch the leader can place, truncates to the leader log end', async (t) => {
  const clock = new ManualClock();
  const leader = replicaSide(t, LEADER, clock);
  const follower = replicaSide(t, FOLLOWER, clock);
  leader.replicas.becomeLeaderOrFollower(leaderAndIsr(LEADER));
  follower.replicas.becomeLeaderOrFollower(leaderAndIsr(LEADER));
  const leaderPartition = leader.replicas.get(TOPIC, 0)!;
  for (let i = 0; i < 3; i++) {
    const r = leaderPartition.appendAsLeader(
      buildBatch([{ value: `leader-${i}` }], { timestamp: clock.nowMs() }),
      1,
      1,
      clock.nowMs(),
      ignoreOutcome,
    );
    assert.equal(r.errorCode, ErrorCode.NONE);
  }
  // The follower's log: ten records without a leader epoch (legacy format), all below its high watermark.
  const followerLog = follower.replicas.get(TOPIC, 0)!.log;
  for (let i = 0; i < 10; i++) {
    followerLog.append(
      buildBatch([{ value: `old-${i}` }], {
        baseOffset: i,
        partitionLeaderEpoch: -1,
        timestamp: clock.nowMs(),
      }),
    );
  }
  followerLog.setHighWatermark(toOffset(10));
  assert.equal(followerLog.epochCache.latestEpoch, -1);

  const endPoint = new DirectLeaderEndPoint(leader);
  const fetchers = new ReplicaFetchers(
    {
      brokerId: FOLLOWER,
      listenerName: 'PLAINTEXT',
      fetchMaxBytes: 1 << 20,
      responseMaxBytes: 1 << 20,
      waitMaxMs: 100,
      minBytes: 1,
      backoffMs: 10,
      socketTimeoutMs: 1000,
    },
    follower.replicas,
    { endpointFor: () => undefined } as unknown as Pick<MetadataCache, 'endpointFor'>,
    () => {},
    silentLogger,
    { clock, endPoints: () => endPoint },
  );
  deferCleanup(t, () => fetchers.stop());
  fetchers.refresh();

  const truncated = await turnsUntil(() => followerLog.logEndOffset === 3);
  assert.ok(
    truncated,
    `the follower's log end is ${followerLog.logEndOffset} after ${endPoint.calls.fetch} fetches and ${endPoint.calls.epochEndOffsets} OffsetForLeaderEpoch requests`,
  );
  assert.ok(endPoint.calls.latest >= 1, 'the leader log end was asked');

  // Fetching goes on from there: the leader's next record reaches the follower. (Below the leader's log end the
  // follower keeps what it had, as in Kafka: such a leader was elected uncleanly.)
  leaderPartition.appendAsLeader(
    buildBatch([{ value: 'leader-3' }], { timestamp: clock.nowMs() }),
    1,
    1,
    clock.nowMs(),
    ignoreOutcome,
  );
  assert.ok(
    await turnsUntil(() => followerLog.logEndOffset === 4),
    `follower log end ${followerLog.logEndOffset}`,
  );
  assert.equal((await readLog(followerLog)).get(3), 'leader-3');
});
