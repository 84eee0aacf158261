// The leader's ISR proposals and the controller's answers (Kafka's Partition.handleAlterPartitionError): an
// answer that leaves the outcome unknown keeps the proposal pending, so the replicas it adds still hold the high
// watermark back, and the same proposal is sent again. Chaos finding F4: a leader whose expansion was written to
// ZooKeeper by a controller that then lost the store's answer (CONNECTIONLOSS, answered UNKNOWN_SERVER_ERROR)
// went back to its smaller committed ISR and acknowledged writes that the added replica, elected next from the
// larger ISR in ZooKeeper, never had.
//
// A real Partition over a real log; the controller side is a script of AlterPartition answers, so that each kind
// of answer can be given at will (a lost store answer cannot be provoked on purpose through ZooKeeper).

import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { type IsrAnswerAction, IsrManager, isrAnswerAction } from '../../src/broker/cluster/isr-manager.js';
import type { TopicLogSettings } from '../../src/broker/config/topic-log-settings.js';
import type { MetadataCache } from '../../src/broker/metadata/metadata-cache.js';
import { type FollowerRules, Partition } from '../../src/broker/replica/partition.js';
import { systemClock } from '../../src/common/clock.js';
import type { BrokerId } from '../../src/common/ids.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type {
  AlterPartitionRequest,
  AlterPartitionResponse,
} from '../../src/protocol/messages/56-alter-partition.js';
import { openHarness } from '../storage/log-harness.js';

const LEADER = 1 as BrokerId;
const B1 = LEADER;
const B2 = 2 as BrokerId;
const B3 = 3 as BrokerId;
const LAG_MS = 60_000;

type Answer = AlterPartitionResponse | Error;

function answer(errorCode: number, isr: number[] = [], leaderEpoch = 5, partitionEpoch = 1): Answer {
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode.NONE,
    topics: [
      {
        topicName: 't',
        topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
        partitions: [
          {
            partitionIndex: 0,
            errorCode,
            leaderId: LEADER,
            leaderEpoch,
            isr,
            leaderRecoveryState: 0,
            partitionEpoch,
          },
        ],
      },
    ],
  };
}

/** A leader of t-0 (replicas 1, 2, 3; ISR [1, 2]) and an ISR manager whose controller answers from `script`. */
function setUp(t: TestContext, topicId = '', rules?: FollowerRules) {
  const h = openHarness(t);
  const p = new Partition('t', 0, topicId, h.log, LEADER, {} as TopicLogSettings, systemClock, rules);
  p.becomeLeader(5, 0, [B1, B2, B3], [B1, B2]);
  const script: Answer[] = [];
  const sent: number[][] = [];
  const requests: { request: AlterPartitionRequest; version: number }[] = [];
  const hosted: Partition[] = [p];
  const controller = {
    isActive: true,
    alterPartition: async (
      request: AlterPartitionRequest,
      version: number,
    ): Promise<AlterPartitionResponse> => {
      requests.push({ request, version });
      sent.push([...request.topics[0]!.partitions[0]!.newIsr]);
      const next = script.shift();
      if (next === undefined) throw new Error('no answer scripted');
      if (next instanceof Error) throw next;
      return next;
    },
  };
  const isr = new IsrManager(
    LEADER,
    LAG_MS,
    'PLAINTEXT',
    { all: () => hosted[Symbol.iterator]() },
    {} as MetadataCache,
    controller,
    systemClock,
    () => {},
    silentLogger,
  );
  const append = (count: number): void => {
    for (let i = 0; i < count; i++) h.append({}, p.leaderEpoch);
    p.maybeAdvanceHighWatermark();
  };
  return { p, log: h.log, isr, script, sent, requests, append, hosted };
}

describe('ISR manager: answers to AlterPartition', () => {
  it('keeps an expansion whose outcome is unknown pending, and sends it again', async (t) => {
    const { p, log, isr, script, sent, append } = setUp(t);
    append(2);
    p.recordFollowerEnd(B2, 2);
    p.recordFollowerEnd(B3, 2);
    assert.equal(log.highWatermark, 2);

    // Broker 3 caught up: [1, 2, 3] is proposed. The controller wrote it, but the store's answer was lost.
    script.push(answer(ErrorCode.UNKNOWN_SERVER_ERROR));
    isr.check();
    await isr.idle();
    assert.deepEqual(sent, [[1, 2, 3]]);
    assert.equal(p.isrChangeInFlight, true, 'the outcome is unknown: the proposal stays pending');

    // Writes that broker 2 has and broker 3 has not are not acknowledged: the controller may have committed
    // [1, 2, 3] and may elect broker 3. Before the fix the proposal was dropped and the high watermark went to 5.
    append(3);
    p.recordFollowerEnd(B2, 5);
    assert.equal(
      log.highWatermark,
      2,
      'broker 3, possibly in the committed ISR, holds the high watermark back',
    );

    // A lost connection is no answer either; the next check sends the same proposal again.
    script.push(new Error('connection to the controller closed'));
    isr.check();
    await isr.idle();
    assert.deepEqual(sent, [
      [1, 2, 3],
      [1, 2, 3],
    ]);
    assert.equal(p.isrChangeInFlight, true);
    assert.equal(log.highWatermark, 2);

    // The retry finds the state changed under it (its own earlier write): the leader waits for a LeaderAndIsr
    // and sends nothing meanwhile.
    script.push(answer(ErrorCode.INVALID_UPDATE_VERSION));
    isr.check();
    await isr.idle();
    isr.check();
    await isr.idle();
    assert.equal(sent.length, 3, 'nothing is sent while waiting for a LeaderAndIsr');
    assert.equal(p.isrChangeInFlight, true);
    assert.equal(log.highWatermark, 2);

    // The controller's LeaderAndIsr carries the committed [1, 2, 3]: settled, and broker 3 counts as it must.
    p.becomeLeader(5, 2, [B1, B2, B3], [B1, B2, B3]);
    assert.equal(p.isrChangeInFlight, false);
    assert.equal(log.highWatermark, 2);
    p.recordFollowerEnd(B3, 5);
    assert.equal(log.highWatermark, 5);
  });

  it('forgets a retry of a partition no longer hosted', async (t) => {
    const { p, isr, script, sent, hosted } = setUp(t);
    p.recordFollowerEnd(B2, 0);
    p.recordFollowerEnd(B3, 0);
    script.push(new Error('connection to the controller closed'));
    isr.check();
    await isr.idle();
    assert.deepEqual(sent, [[1, 2, 3]]);
    // A StopReplica removes it before the next check: the retry is dropped, not kept for ever.
    hosted.length = 0;
    isr.check();
    hosted.push(p);
    isr.check();
    await isr.idle();
    assert.equal(sent.length, 1, 'the dropped retry is not sent');
  });

  it('goes back to the committed ISR when the controller says it did not apply the change', async (t) => {
    // Broker 3 is ineligible: its registration is gone, and this broker's metadata no longer lists it either.
    const { p, log, isr, script, append } = setUp(t, '', {
      lagTimeMaxMs: LAG_MS,
      isAlive: (id) => id !== B3,
    });
    append(2);
    p.recordFollowerEnd(B2, 2);
    p.recordFollowerEnd(B3, 2);
    script.push(answer(ErrorCode.INELIGIBLE_REPLICA));
    isr.check();
    await isr.idle();
    assert.equal(p.isrChangeInFlight, false);
    append(3);
    p.recordFollowerEnd(B2, 5);
    assert.equal(log.highWatermark, 5, 'broker 3 was certainly not added');
  });

  it('applies an accepted change', async (t) => {
    const { p, log, isr, script, append } = setUp(t);
    append(2);
    p.recordFollowerEnd(B2, 2);
    p.recordFollowerEnd(B3, 2);
    script.push(answer(ErrorCode.NONE, [1, 2, 3], 5, 1));
    isr.check();
    await isr.idle();
    assert.deepEqual(p.isr, [1, 2, 3]);
    assert.equal(p.isrChangeInFlight, false);
    assert.equal(isr.isrChanges.expands, 1);
    append(1);
    p.recordFollowerEnd(B2, 3);
    assert.equal(log.highWatermark, 2);
    p.recordFollowerEnd(B3, 3);
    assert.equal(log.highWatermark, 3);
  });

  it('keeps an accepted change when a LeaderAndIsr of its leader epoch built before it comes after', async (t) => {
    const { p, isr, script, append } = setUp(t);
    append(2);
    p.recordFollowerEnd(B2, 2);
    p.recordFollowerEnd(B3, 2);
    script.push(answer(ErrorCode.NONE, [1, 2, 3], 5, 1));
    isr.check();
    await isr.idle();
    assert.deepEqual(p.isr, [1, 2, 3]);

    // A controller that took over sent every broker the state it had read (leader epoch 5, partition epoch 0)
    // before it handled the expansion; that LeaderAndIsr comes after the answer. Kafka's makeLeader skips a
    // partition epoch older than the one it has: the leader keeps the ISR the controller committed.
    p.becomeLeader(5, 0, [B1, B2, B3], [B1, B2]);
    assert.deepEqual(p.isr, [1, 2, 3], 'the ISR committed after that LeaderAndIsr was built');
    // Its next change names the partition epoch the controller has: with the older one, the controller answers
    // INVALID_UPDATE_VERSION and the leader waits for a LeaderAndIsr that may not come for a long time.
    assert.equal(p.partitionEpoch, 1);

    // A LeaderAndIsr of the same leader epoch and a newer partition epoch applies.
    p.becomeLeader(5, 3, [B1, B2, B3], [B1, B2]);
    assert.deepEqual(p.isr, [1, 2]);
    assert.equal(p.partitionEpoch, 3);
  });

  it('names each ISR member with the broker epoch of its last fetch (KIP-903), by topic id', async (t) => {
    const { p, isr, script, requests, append } = setUp(t, 'YnJvb2stdGVzdC10b3BpYw');
    isr.brokerEpoch = 100;
    append(2);
    p.recordFollowerEnd(B2, 2, undefined, 201);
    p.recordFollowerEnd(B3, 2, undefined, 302);
    assert.equal(p.followerBrokerEpoch(B3), 302);
    script.push(answer(ErrorCode.NONE, [1, 2, 3], 5, 1));
    isr.check();
    await isr.idle();
    const [{ request, version }] = requests as [(typeof requests)[number]];
    assert.equal(version, 3);
    assert.equal(request.topics[0]!.topicId, 'YnJvb2stdGVzdC10b3BpYw');
    assert.deepEqual(request.topics[0]!.partitions[0]!.newIsrWithEpochs, [
      { brokerId: 1, brokerEpoch: 100n },
      { brokerId: 2, brokerEpoch: 201n },
      { brokerId: 3, brokerEpoch: 302n },
    ]);
  });

  it('a topic without a known id goes by name, without epochs (version 1)', async (t) => {
    const { p, isr, script, requests } = setUp(t);
    p.recordFollowerEnd(B3, 0, undefined, 302);
    script.push(answer(ErrorCode.NONE, [1, 2, 3], 5, 1));
    isr.check();
    await isr.idle();
    assert.equal(requests[0]?.version, 1);
    assert.deepEqual(requests[0]?.request.topics[0]?.partitions[0]?.newIsrWithEpochs, []);
  });

  it("an ISR follower fetching under a new broker epoch leaves the ISR unless it is at the leader's end", (t) => {
    const { p, append } = setUp(t, 'YnJvb2stdGVzdC10b3BpYw');
    append(4);
    p.recordFollowerEnd(B2, 4, undefined, 201);
    append(2);
    // Broker 2 restarted as epoch 202 and fetches from before where it was (it lost unflushed bytes): what its
    // earlier incarnation fetched no longer counts, so it is out at once, not after replica.lag.time.max.ms.
    p.recordFollowerEnd(B2, 3, undefined, 202);
    assert.equal(p.followerBrokerEpoch(B2), 202);
    assert.deepEqual(p.proposedIsr(Date.now(), LAG_MS), [1]);
    // The same incarnation catching up to the leader's end is in sync again.
    p.recordFollowerEnd(B2, 6, undefined, 202);
    assert.equal(p.proposedIsr(Date.now(), LAG_MS), null);
  });

  it('classifies answers as Kafka does', () => {
    const table: [number | null, number | undefined, IsrAnswerAction][] = [
      [null, undefined, 'retry'],
      [ErrorCode.NOT_CONTROLLER, undefined, 'retry'],
      [ErrorCode.STALE_BROKER_EPOCH, undefined, 'retry'],
      [ErrorCode.NONE, undefined, 'retry'],
      [ErrorCode.NONE, ErrorCode.NONE, 'accepted'],
      [ErrorCode.NONE, ErrorCode.OPERATION_NOT_ATTEMPTED, 'reset'],
      [ErrorCode.NONE, ErrorCode.INELIGIBLE_REPLICA, 'reset'],
      [ErrorCode.NONE, ErrorCode.FENCED_LEADER_EPOCH, 'wait'],
      [ErrorCode.NONE, ErrorCode.INVALID_UPDATE_VERSION, 'wait'],
      [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'wait'],
      [ErrorCode.NONE, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'wait'],
      [ErrorCode.NONE, ErrorCode.UNKNOWN_SERVER_ERROR, 'retry'],
      [ErrorCode.NONE, ErrorCode.NOT_CONTROLLER, 'retry'],
      [ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT, 'retry'],
    ];
    for (const [top, partition, expected] of table) {
      assert.equal(isrAnswerAction(top, partition), expected, `top ${top}, partition ${partition}`);
    }
  });
});
