// The transaction coordinator's state machine under a ManualClock and an in-memory __transaction_state:
// InitProducerId (new ids, epoch bumps, fencing, concurrent transactions, timeouts bounds), AddPartitionsToTxn,
// EndTxn through the Prepare and Complete states with markers, timeouts aborting with a bumped epoch, and
// loading what was written (finishing a transaction left in PrepareCommit).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { CapturingLogger, silentLogger } from '../../../src/common/logger.js';
import {
  type MarkerFailure,
  type MarkerRequest,
  TransactionCoordinator,
  TxnState,
  transactionPartition,
} from '../../../src/coordinator/transaction/transaction-coordinator.js';
import { ErrorCode, errorName } from '../../../src/protocol/errors.js';
import { MemoryStorage } from '../memory-storage.js';

const E = ErrorCode;
const PARTITIONS = 4;

interface Harness {
  clock: ManualClock;
  storage: MemoryStorage;
  markers: MarkerRequest[];
  /** While true, every marker is answered NOT_LEADER_OR_FOLLOWER. */
  failMarkers: { value: boolean };
  /** Answers for single partitions ("topic-partition"), taking precedence over failMarkers. */
  markerErrors: Map<string, number>;
  retries: (() => void)[];
  /** The leader epoch of every __transaction_state partition (the coordinator epoch); 7 at first. */
  epoch: { value: number };
  /** While true, loads wait in `loads` instead of running at once. */
  holdLoads: { value: boolean };
  loads: (() => void)[];
  logger: CapturingLogger;
  coordinator: TransactionCoordinator;
}

function harness(storage = new MemoryStorage(), clock = new ManualClock()): Harness {
  let nextId = 1000;
  const markers: MarkerRequest[] = [];
  const failMarkers = { value: false };
  const markerErrors = new Map<string, number>();
  const retries: (() => void)[] = [];
  const epoch = { value: 7 };
  const holdLoads = { value: false };
  const loads: (() => void)[] = [];
  const logger = new CapturingLogger();
  const coordinator = new TransactionCoordinator({
    clock,
    logger,
    storage,
    partitionCount: () => PARTITIONS,
    nextProducerId: async () => nextId++,
    maxTimeoutMs: 900_000,
    abortIntervalMs: 10_000,
    transactionalIdExpirationMs: 604_800_000,
    removeExpiredIntervalMs: 3_600_000,
    writeMarkers: async (request): Promise<MarkerFailure[]> => {
      markers.push(request);
      const failures: MarkerFailure[] = [];
      for (const tp of request.partitions) {
        const errorCode =
          markerErrors.get(`${tp.topic}-${tp.partition}`) ??
          (failMarkers.value ? E.NOT_LEADER_OR_FOLLOWER : E.NONE);
        if (errorCode !== E.NONE) failures.push({ ...tp, errorCode });
      }
      return failures;
    },
    coordinatorEpoch: () => epoch.value,
    partitionExists: (topic) => topic !== 'missing',
    defer: (fn) => {
      if (holdLoads.value) loads.push(fn);
      else fn();
    },
    retry: (fn) => {
      retries.push(fn);
    },
  });
  for (let p = 0; p < PARTITIONS; p++) coordinator.onLeadershipChange(p, true);
  return {
    clock,
    storage,
    markers,
    failMarkers,
    markerErrors,
    retries,
    epoch,
    holdLoads,
    loads,
    logger,
    coordinator,
  };
}

const settle = () => new Promise((r) => setImmediate(r));
const TP = [
  { topic: 't', partition: 0 },
  { topic: 't', partition: 1 },
];

describe('transaction coordinator', () => {
  it('gives a new transactional id a producer id with epoch 0, and bumps the epoch on each init', async () => {
    const { coordinator } = harness();
    const first = await coordinator.initProducerId('tx', 60_000, null);
    assert.deepEqual(first, { errorCode: E.NONE, producerId: 1000, producerEpoch: 0 });
    const second = await coordinator.initProducerId('tx', 60_000, null);
    assert.deepEqual(second, { errorCode: E.NONE, producerId: 1000, producerEpoch: 1 });
    assert.equal(coordinator.describe('tx')?.state, TxnState.Empty);
  });

  it('refuses timeouts above transaction.max.timeout.ms and ids of partitions not led here', async () => {
    const { coordinator } = harness();
    assert.equal(
      (await coordinator.initProducerId('tx', 900_001, null)).errorCode,
      E.INVALID_TRANSACTION_TIMEOUT,
    );
    assert.equal((await coordinator.initProducerId('tx', 0, null)).errorCode, E.INVALID_TRANSACTION_TIMEOUT);
    coordinator.onLeadershipChange(transactionPartition('tx', PARTITIONS), false);
    assert.equal((await coordinator.initProducerId('tx', 1000, null)).errorCode, E.NOT_COORDINATOR);
  });

  it('commits: Ongoing, PrepareCommit (answered), markers with the coordinator epoch, CompleteCommit', async () => {
    const { coordinator, markers } = harness();
    const { producerId, producerEpoch } = await coordinator.initProducerId('tx', 60_000, null);
    const added = await coordinator.addPartitions('tx', producerId, producerEpoch, TP);
    assert.deepEqual([...added.values()], [E.NONE, E.NONE]);
    assert.equal(coordinator.describe('tx')?.state, TxnState.Ongoing);
    assert.equal(await coordinator.endTransaction('tx', producerId, producerEpoch, true), E.NONE);
    await settle();
    assert.equal(markers.length, 1);
    assert.deepEqual(
      { ...markers[0]!, partitions: [...markers[0]!.partitions] },
      { transactionalId: 'tx', producerId, producerEpoch, commit: true, coordinatorEpoch: 7, partitions: TP },
    );
    assert.equal(coordinator.describe('tx')?.state, TxnState.CompleteCommit);
    // A retried commit is answered NONE; an abort now is an invalid state.
    assert.equal(await coordinator.endTransaction('tx', producerId, producerEpoch, true), E.NONE);
    assert.equal(
      await coordinator.endTransaction('tx', producerId, producerEpoch, false),
      E.INVALID_TXN_STATE,
    );
  });

  it('answers CONCURRENT_TRANSACTIONS while markers are pending, and retries them', async () => {
    const { coordinator, failMarkers, retries } = harness();
    const { producerId, producerEpoch } = await coordinator.initProducerId('tx', 60_000, null);
    await coordinator.addPartitions('tx', producerId, producerEpoch, TP);
    failMarkers.value = true;
    assert.equal(await coordinator.endTransaction('tx', producerId, producerEpoch, false), E.NONE);
    await settle();
    assert.equal(coordinator.describe('tx')?.state, TxnState.PrepareAbort);
    const again = await coordinator.addPartitions('tx', producerId, producerEpoch, TP);
    assert.deepEqual([...again.values()], [E.CONCURRENT_TRANSACTIONS, E.CONCURRENT_TRANSACTIONS]);
    assert.equal((await coordinator.initProducerId('tx', 60_000, null)).errorCode, E.CONCURRENT_TRANSACTIONS);
    failMarkers.value = false;
    assert.equal(retries.length, 1);
    retries.shift()!();
    await settle();
    assert.equal(coordinator.describe('tx')?.state, TxnState.CompleteAbort);
  });

  it('stops sending markers when a leader answers that another coordinator owns the transaction', async () => {
    // INVALID_PRODUCER_EPOCH and TRANSACTION_COORDINATOR_FENCED: a later epoch of the producer, or a marker of a
    // later coordinator, reached the partition. As Kafka's TransactionMarkerRequestCompletionHandler, no marker is
    // sent again and no Complete record is written; the transaction stays Prepare here. Before the fix both were
    // retried every 200 ms for as long as this broker stayed coordinator.
    for (const errorCode of [E.INVALID_PRODUCER_EPOCH, E.TRANSACTION_COORDINATOR_FENCED]) {
      const { coordinator, markers, markerErrors, retries, logger, storage } = harness();
      const p = await coordinator.initProducerId('tx', 60_000, null);
      await coordinator.addPartitions('tx', p.producerId, p.producerEpoch, TP);
      markerErrors.set('t-1', errorCode);
      const logged = storage.logs.get(transactionPartition('tx', PARTITIONS))!.length;
      assert.equal(await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true), E.NONE);
      await settle();
      assert.equal(markers.length, 1);
      assert.equal(retries.length, 0, `${errorCode}: no retry is scheduled`);
      assert.equal(coordinator.describe('tx')?.state, TxnState.PrepareCommit);
      assert.equal(
        storage.logs.get(transactionPartition('tx', PARTITIONS))!.length,
        logged + 1,
        'PrepareCommit only: no CompleteCommit',
      );
      assert.equal(
        (await coordinator.initProducerId('tx', 60_000, null)).errorCode,
        E.CONCURRENT_TRANSACTIONS,
      );
      const lines = logger.matching('marker of transaction tx');
      assert.equal(lines.length, 1);
      assert.equal(lines[0]!.level, 'warn');
      assert.match(
        lines[0]!.message,
        /t-1 failed with (INVALID_PRODUCER_EPOCH|TRANSACTION_COORDINATOR_FENCED)/,
      );
    }
  });

  it('takes a partition answered UNSUPPORTED_FOR_MESSAGE_FORMAT out of the transaction, as Kafka does', async () => {
    const { coordinator, markers, markerErrors, retries } = harness();
    const p = await coordinator.initProducerId('tx', 60_000, null);
    await coordinator.addPartitions('tx', p.producerId, p.producerEpoch, TP);
    markerErrors.set('t-0', E.UNSUPPORTED_FOR_MESSAGE_FORMAT);
    assert.equal(await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, false), E.NONE);
    await settle();
    assert.equal(markers.length, 1);
    assert.equal(retries.length, 0);
    assert.equal(coordinator.describe('tx')?.state, TxnState.CompleteAbort);
  });

  it("answers each marker error as Kafka's TransactionMarkerRequestCompletionHandler does", async () => {
    // t-1 answers `errorCode`, t-0 answers NOT_LEADER_OR_FOLLOWER (a retriable answer in the same round).
    // Kafka: retriable answers are sent again; a fence cancels every marker of the transaction, the retriable
    // one of t-0 too (abortSending); UNSUPPORTED_* take the partition out. The answers Kafka calls fatal or
    // unexpected make its handler throw, leaving the transaction hanging; Brook retries them (documented).
    const retriable = [
      E.UNKNOWN_TOPIC_OR_PARTITION,
      E.NOT_LEADER_OR_FOLLOWER,
      E.NOT_ENOUGH_REPLICAS,
      E.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
      E.REQUEST_TIMED_OUT,
      E.KAFKA_STORAGE_ERROR,
      // No answer: the writer's reasons.
      E.LEADER_NOT_AVAILABLE,
      E.BROKER_NOT_AVAILABLE,
      E.NETWORK_EXCEPTION,
      // Fatal or unexpected in Kafka.
      E.CORRUPT_MESSAGE,
      E.MESSAGE_TOO_LARGE,
      E.RECORD_LIST_TOO_LARGE,
      E.INVALID_REQUIRED_ACKS,
      E.UNKNOWN_SERVER_ERROR,
    ];
    const cases: { errorCode: number; expect: 'retry' | 'fenced' | 'written' }[] = [
      ...retriable.map((errorCode) => ({ errorCode, expect: 'retry' as const })),
      { errorCode: E.INVALID_PRODUCER_EPOCH, expect: 'fenced' },
      { errorCode: E.TRANSACTION_COORDINATOR_FENCED, expect: 'fenced' },
      { errorCode: E.UNSUPPORTED_FOR_MESSAGE_FORMAT, expect: 'written' },
      { errorCode: E.UNSUPPORTED_VERSION, expect: 'written' },
    ];
    for (const { errorCode, expect } of cases) {
      const what = `${errorName(errorCode)}`;
      const { coordinator, markers, markerErrors, retries } = harness();
      const p = await coordinator.initProducerId('tx', 60_000, null);
      await coordinator.addPartitions('tx', p.producerId, p.producerEpoch, TP);
      markerErrors.set('t-0', E.NOT_LEADER_OR_FOLLOWER);
      markerErrors.set('t-1', errorCode);
      assert.equal(await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true), E.NONE);
      await settle();
      assert.equal(markers.length, 1, what);
      assert.equal(coordinator.describe('tx')?.state, TxnState.PrepareCommit, what);
      if (expect === 'fenced') {
        assert.equal(retries.length, 0, `${what}: nothing is sent again, not even t-0`);
        continue;
      }
      assert.equal(retries.length, 1, what);
      markerErrors.clear();
      retries.shift()!();
      await settle();
      assert.deepEqual(
        markers[1]!.partitions.map((tp) => `${tp.topic}-${tp.partition}`),
        expect === 'retry' ? ['t-0', 't-1'] : ['t-0'],
        `${what}: the partitions sent again`,
      );
      assert.equal(coordinator.describe('tx')?.state, TxnState.CompleteCommit, what);
    }
  });

  it('holds a wrongly fenced transaction in Prepare until the coordinator epoch changes here, then completes it', async () => {
    // A leader answers TRANSACTION_COORDINATOR_FENCED although no other coordinator exists. As Kafka, this
    // coordinator believes it, sends nothing more and writes no Complete record: the producer is answered
    // CONCURRENT_TRANSACTIONS. When the controller elects this broker again under a higher leader epoch, the
    // partition is reloaded (Kafka's onElection) and the markers go out again with the new coordinator epoch.
    // Before the reload on a higher epoch, the transaction stayed in PrepareCommit for as long as this broker led.
    const { coordinator, markers, markerErrors, retries, epoch, holdLoads, loads, storage } = harness();
    const p = await coordinator.initProducerId('tx', 60_000, null);
    await coordinator.addPartitions('tx', p.producerId, p.producerEpoch, TP);
    markerErrors.set('t-1', E.TRANSACTION_COORDINATOR_FENCED);
    assert.equal(await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true), E.NONE);
    await settle();
    assert.equal(retries.length, 0);
    assert.equal(coordinator.describe('tx')?.state, TxnState.PrepareCommit);
    assert.equal(
      await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true),
      E.CONCURRENT_TRANSACTIONS,
    );
    assert.equal((await coordinator.initProducerId('tx', 60_000, null)).errorCode, E.CONCURRENT_TRANSACTIONS);
    const partition = transactionPartition('tx', PARTITIONS);
    // A LeaderAndIsr at the same epoch changes nothing.
    coordinator.onLeadershipChange(partition, true);
    await settle();
    assert.equal(markers.length, 1);
    assert.equal(coordinator.describe('tx')?.state, TxnState.PrepareCommit);
    // The leader answers correctly now; this broker is elected again under epoch 8.
    markerErrors.clear();
    epoch.value = 8;
    holdLoads.value = true;
    coordinator.onLeadershipChange(partition, true);
    assert.equal(
      (await coordinator.initProducerId('tx', 60_000, null)).errorCode,
      E.COORDINATOR_LOAD_IN_PROGRESS,
      'the partition is reloaded',
    );
    assert.equal(loads.length, 1);
    loads.shift()!();
    await settle();
    assert.equal(markers.length, 2);
    assert.equal(markers[1]!.coordinatorEpoch, 8);
    assert.equal(markers[1]!.commit, true);
    assert.deepEqual(
      markers[1]!.partitions.map((tp) => `${tp.topic}-${tp.partition}`),
      ['t-0', 't-1'],
    );
    assert.equal(coordinator.describe('tx')?.state, TxnState.CompleteCommit);
    assert.equal(storage.logs.get(partition)!.length, 4, 'Empty, Ongoing, PrepareCommit, CompleteCommit');
    assert.equal(await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true), E.NONE);
  });

  it('cancels the markers pending under the old coordinator epoch when this broker is elected again', async () => {
    // Kafka removes the markers of a partition whose coordinator epoch changed (removeMarkersForTxnTopicPartition)
    // and the reload sends new ones. Before, the old loop went on and sent its markers with whatever epoch the
    // partition had at each retry, and nothing was reloaded.
    const { coordinator, markers, failMarkers, retries, epoch } = harness();
    const p = await coordinator.initProducerId('tx', 60_000, null);
    await coordinator.addPartitions('tx', p.producerId, p.producerEpoch, TP);
    failMarkers.value = true;
    assert.equal(await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, false), E.NONE);
    await settle();
    assert.equal(markers.length, 1);
    assert.equal(markers[0]!.coordinatorEpoch, 7);
    assert.equal(retries.length, 1);
    const oldRetry = retries.shift()!;
    epoch.value = 9;
    coordinator.onLeadershipChange(transactionPartition('tx', PARTITIONS), true);
    await settle();
    assert.equal(markers.length, 2, 'the reload sends the markers of the PrepareAbort it found');
    assert.equal(markers[1]!.coordinatorEpoch, 9);
    assert.equal(markers[1]!.commit, false);
    assert.equal(retries.length, 1, "the reload's retry");
    oldRetry();
    await settle();
    assert.equal(markers.length, 2, 'the retry of the old epoch sends nothing');
    failMarkers.value = false;
    retries.shift()!();
    await settle();
    assert.deepEqual(
      markers.map((m) => m.coordinatorEpoch),
      [7, 9, 9],
    );
    assert.equal(coordinator.describe('tx')?.state, TxnState.CompleteAbort);
  });

  it('logs a failed marker once per partition and error, with the transactional id, and retries it', async () => {
    const { coordinator, markers, markerErrors, retries, logger } = harness();
    const p = await coordinator.initProducerId('tx', 60_000, null);
    await coordinator.addPartitions('tx', p.producerId, p.producerEpoch, TP);
    markerErrors.set('t-1', E.NOT_ENOUGH_REPLICAS);
    assert.equal(await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true), E.NONE);
    await settle();
    for (let i = 0; i < 3; i++) {
      assert.equal(retries.length, 1);
      retries.shift()!();
      await settle();
    }
    markerErrors.set('t-1', E.NOT_LEADER_OR_FOLLOWER);
    retries.shift()!();
    await settle();
    assert.deepEqual(
      markers.map((m) => m.partitions.map((tp) => `${tp.topic}-${tp.partition}`)),
      [['t-0', 't-1'], ['t-1'], ['t-1'], ['t-1'], ['t-1']],
      'only the partition that did not take the marker is sent again',
    );
    const lines = logger.matching('marker of transaction tx');
    assert.deepEqual(
      lines.map((l) => l.level),
      ['info', 'info'],
    );
    assert.match(
      lines[0]!.message,
      /COMMIT marker of transaction tx .* for t-1 failed with NOT_ENOUGH_REPLICAS/,
    );
    assert.match(lines[1]!.message, /for t-1 failed with NOT_LEADER_OR_FOLLOWER/);
    markerErrors.clear();
    retries.shift()!();
    await settle();
    assert.equal(coordinator.describe('tx')?.state, TxnState.CompleteCommit);
  });

  it('fences an older epoch and aborts its ongoing transaction when a new producer initializes', async () => {
    const { coordinator, markers } = harness();
    const old = await coordinator.initProducerId('tx', 60_000, null);
    await coordinator.addPartitions('tx', old.producerId, old.producerEpoch, TP);
    // The new producer first sees CONCURRENT_TRANSACTIONS while the old transaction is aborted, then gets
    // a bumped epoch.
    assert.equal((await coordinator.initProducerId('tx', 60_000, null)).errorCode, E.CONCURRENT_TRANSACTIONS);
    await settle();
    assert.equal(markers.length, 1);
    assert.equal(markers[0]!.commit, false);
    assert.equal(markers[0]!.producerEpoch, old.producerEpoch + 1);
    assert.equal(coordinator.describe('tx')?.state, TxnState.CompleteAbort);
    const fresh = await coordinator.initProducerId('tx', 60_000, null);
    assert.equal(fresh.errorCode, E.NONE);
    assert.equal(fresh.producerEpoch, old.producerEpoch + 2);
    const added = await coordinator.addPartitions('tx', old.producerId, old.producerEpoch, TP);
    assert.deepEqual([...added.values()], [E.PRODUCER_FENCED, E.PRODUCER_FENCED]);
    assert.equal(
      await coordinator.endTransaction('tx', old.producerId, old.producerEpoch, true),
      E.PRODUCER_FENCED,
    );
    assert.equal(await coordinator.endTransaction('tx', 4242, 0, true), E.INVALID_PRODUCER_ID_MAPPING);
  });

  it('aborts a transaction older than its timeout with a bumped epoch', async () => {
    const { coordinator, clock, markers } = harness();
    const p = await coordinator.initProducerId('tx', 5_000, null);
    await coordinator.addPartitions('tx', p.producerId, p.producerEpoch, TP);
    clock.advance(4_000);
    coordinator.tick();
    assert.equal(coordinator.describe('tx')?.state, TxnState.Ongoing, 'not yet checked');
    clock.advance(6_000);
    coordinator.tick();
    await settle();
    assert.equal(markers.length, 1);
    assert.equal(markers[0]!.commit, false);
    assert.equal(coordinator.describe('tx')?.state, TxnState.CompleteAbort);
    assert.equal(
      await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true),
      E.PRODUCER_FENCED,
    );
  });

  it('a timeout abort whose write fails keeps one bumped epoch and writes it on the next attempt', async () => {
    // Before the fix, every failed fence bumped the epoch again: two failures and a success aborted under epoch + 3.
    const { coordinator, clock, markers, storage } = harness();
    const p = await coordinator.initProducerId('tx', 5_000, null);
    await coordinator.addPartitions('tx', p.producerId, p.producerEpoch, TP);
    storage.failWith = E.NOT_ENOUGH_REPLICAS;
    for (let attempt = 0; attempt < 2; attempt++) {
      clock.advance(10_000);
      coordinator.tick();
      await settle();
      const m = coordinator.describe('tx');
      assert.equal(m?.state, TxnState.Ongoing, 'the failed PrepareAbort leaves the transaction Ongoing');
      assert.equal(m?.busy, false);
      assert.equal(m?.producerEpoch, p.producerEpoch + 1, 'the fence epoch is bumped once, in memory');
    }
    assert.equal(coordinator.describe('tx')?.hasFailedEpochFence, true);
    assert.equal(markers.length, 0);
    // The old producer stays fenced while the fence is not written.
    assert.equal(
      await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true),
      E.PRODUCER_FENCED,
    );
    storage.failWith = 0;
    clock.advance(10_000);
    coordinator.tick();
    await settle();
    assert.equal(markers.length, 1);
    assert.equal(markers[0]!.commit, false);
    assert.equal(markers[0]!.producerEpoch, p.producerEpoch + 1);
    const m = coordinator.describe('tx');
    assert.equal(m?.state, TxnState.CompleteAbort);
    assert.equal(m?.hasFailedEpochFence, false);
    // The log holds the epoch of the written fence: a new coordinator loading it hands out the next one.
    const b = harness(storage);
    await settle();
    const next = await b.coordinator.initProducerId('tx', 60_000, null);
    assert.deepEqual(next, {
      errorCode: E.NONE,
      producerId: p.producerId,
      producerEpoch: p.producerEpoch + 2,
    });
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION for missing partitions and OPERATION_NOT_ATTEMPTED for the others', async () => {
    const { coordinator } = harness();
    const p = await coordinator.initProducerId('tx', 60_000, null);
    const r = await coordinator.addPartitions('tx', p.producerId, p.producerEpoch, [
      { topic: 't', partition: 0 },
      { topic: 'missing', partition: 0 },
    ]);
    assert.deepEqual([...r.values()], [E.OPERATION_NOT_ATTEMPTED, E.UNKNOWN_TOPIC_OR_PARTITION]);
    assert.equal(
      await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true),
      E.INVALID_TXN_STATE,
    );
  });

  it('answers CONCURRENT_TRANSACTIONS while a transition is being written', async () => {
    const { coordinator, storage } = harness();
    const p = await coordinator.initProducerId('tx', 60_000, null);
    storage.hold = true;
    const pending = coordinator.addPartitions('tx', p.producerId, p.producerEpoch, TP);
    const concurrent = await coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true);
    assert.equal(concurrent, E.CONCURRENT_TRANSACTIONS);
    storage.release();
    assert.deepEqual([...(await pending).values()], [E.NONE, E.NONE]);
  });

  it('loads the written state on a new leader and finishes a transaction left in PrepareCommit', async () => {
    const a = harness();
    const p = await a.coordinator.initProducerId('tx', 60_000, null);
    await a.coordinator.addPartitions('tx', p.producerId, p.producerEpoch, TP);
    a.failMarkers.value = true;
    assert.equal(await a.coordinator.endTransaction('tx', p.producerId, p.producerEpoch, true), E.NONE);
    await settle();
    assert.equal(a.coordinator.describe('tx')?.state, TxnState.PrepareCommit);
    // Another broker becomes leader of the partition and reads the same log.
    const b = harness(a.storage);
    await settle();
    assert.equal(b.markers.length, 1);
    assert.equal(b.markers[0]!.commit, true);
    assert.equal(b.markers[0]!.producerId, p.producerId);
    assert.equal(b.coordinator.describe('tx')?.state, TxnState.CompleteCommit);
    const next = await b.coordinator.initProducerId('tx', 60_000, null);
    assert.deepEqual(next, {
      errorCode: E.NONE,
      producerId: p.producerId,
      producerEpoch: p.producerEpoch + 1,
    });
    // The old leader loses the partition: its ids answer NOT_COORDINATOR.
    a.coordinator.onLeadershipChange(transactionPartition('tx', PARTITIONS), false);
    assert.equal((await a.coordinator.initProducerId('tx', 60_000, null)).errorCode, E.NOT_COORDINATOR);
  });

  it('forgets an id idle for transactional.id.expiration.ms with a tombstone; busy while it is written', async () => {
    const { coordinator, clock, storage } = harness();
    const done = await coordinator.initProducerId('done', 60_000, null);
    await coordinator.addPartitions('done', done.producerId, done.producerEpoch, TP);
    await coordinator.endTransaction('done', done.producerId, done.producerEpoch, true);
    await settle();
    assert.equal(coordinator.describe('done')?.state, TxnState.CompleteCommit);
    const running = await coordinator.initProducerId('running', 60_000, null);
    await coordinator.addPartitions('running', running.producerId, running.producerEpoch, TP);
    // The default expiration (seven days) and check interval (an hour) go by: the timeout check aborts the
    // Ongoing transaction (a write in flight, so it is not expired), the completed one is expired.
    clock.advance(604_800_000 + 3_600_000);
    storage.hold = true;
    coordinator.tick();
    assert.equal(
      (await coordinator.initProducerId('done', 60_000, null)).errorCode,
      E.CONCURRENT_TRANSACTIONS,
      'busy while its tombstone is written',
    );
    storage.release();
    await settle();
    assert.equal(coordinator.describe('done'), undefined);
    assert.equal(coordinator.describe('running')?.state, TxnState.CompleteAbort);
    const log = storage.logs.get(transactionPartition('done', PARTITIONS)) ?? [];
    assert.equal(log.at(-1)?.value, null, 'the last record of the partition is the tombstone');
    // A new coordinator loading the log does not know the id; initialized again, it is a new one (epoch 0).
    const b = harness(storage);
    await settle();
    assert.equal(b.coordinator.describe('done'), undefined);
    assert.equal((await b.coordinator.initProducerId('done', 60_000, null)).producerEpoch, 0);
  });

  it('keeps an expired id whose tombstone write fails, until the next check', async () => {
    const { coordinator, clock, storage } = harness();
    await coordinator.initProducerId('idle', 60_000, null);
    clock.advance(604_800_000 + 3_600_000);
    storage.failWith = E.NOT_ENOUGH_REPLICAS;
    coordinator.tick();
    await settle();
    assert.equal(coordinator.describe('idle')?.busy, false);
    assert.equal(coordinator.describe('idle')?.state, TxnState.Empty);
    storage.failWith = 0;
    clock.advance(3_600_000);
    coordinator.tick();
    await settle();
    assert.equal(coordinator.describe('idle'), undefined);
  });

  it('answers COORDINATOR_LOAD_IN_PROGRESS while loading', async () => {
    const deferred: (() => void)[] = [];
    const coordinator = new TransactionCoordinator({
      clock: new ManualClock(),
      logger: silentLogger,
      storage: new MemoryStorage(),
      partitionCount: () => PARTITIONS,
      nextProducerId: async () => 1,
      maxTimeoutMs: 900_000,
      abortIntervalMs: 10_000,
      transactionalIdExpirationMs: 604_800_000,
      removeExpiredIntervalMs: 3_600_000,
      writeMarkers: async () => [],
      coordinatorEpoch: () => 0,
      defer: (fn) => deferred.push(fn),
    });
    coordinator.onLeadershipChange(transactionPartition('tx', PARTITIONS), true);
    assert.equal(
      (await coordinator.initProducerId('tx', 1000, null)).errorCode,
      E.COORDINATOR_LOAD_IN_PROGRESS,
    );
    for (const f of deferred) f();
    assert.equal((await coordinator.initProducerId('tx', 1000, null)).errorCode, E.NONE);
  });
});
