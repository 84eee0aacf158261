// Position validation (KIP-320), as Kafka's consumer does it (SubscriptionState.maybeValidatePositionForCurrentLeader
// and maybeCompleteValidation, OffsetFetcherUtils): a position that carries a leader epoch (restored from a committed
// offset, or given to seek()) is checked with OffsetsForLeaderEpoch before it is fetched from. When the leader's log
// ends that epoch below the position (the log was truncated), the consumer moves to that end offset with
// auto.offset.reset configured, and poll() throws LogTruncationError with the divergent offset under
// auto.offset.reset=none. A committed offset out of range without an epoch is reset by the policy, not read again.
// position() answers only a validated position, as Kafka's (it validates, and waits up to its timeout): before any
// poll() it gives the divergent end offset, throws LogTruncationError under auto.offset.reset=none, and times out
// while the leader does not answer.
// Against an in-process broker whose log ends below offsets committed past it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Admin } from '../../src/client/admin.js';
import { Consumer, type ConsumerOptions, type ConsumerRecord } from '../../src/client/consumer.js';
import { KafkaProtocolError, LogTruncationError, RequestTimeoutError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type EpochTopic, startEpochTopic } from '../helpers/epoch-topic.js';
import type { InProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'position-validation';
const tp = { topic: TOPIC, partition: 0 };
const RECORDS = 3;

describe('position validation with OffsetsForLeaderEpoch', () => {
  let setup: EpochTopic;
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  let leaderEpoch: number;
  const validated: number[] = [];
  /** While set, OffsetsForLeaderEpoch requests are held unanswered until it resolves. */
  let holdValidation: Promise<void> | null = null;

  before(async () => {
    setup = await startEpochTopic(TOPIC, RECORDS);
    ({ broker, bootstrapServers, admin, leaderEpoch } = setup);
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.OFFSET_FOR_LEADER_EPOCH) return undefined;
      validated.push(request.apiKey);
      const held = holdValidation;
      return held === null ? undefined : held.then(() => request.handle());
    });
  });
  after(async () => {
    await setup?.stop();
  });

  /** Commits `offset` for the group as if a consumer had read up to it in `epoch`, past the log's end. */
  async function commitPastEnd(groupId: string, offset: number, epoch?: number): Promise<void> {
    const committer = new Consumer({ bootstrapServers, groupId, enableAutoCommit: false });
    try {
      await committer.commit([{ ...tp, offset, leaderEpoch: epoch }]);
    } finally {
      await committer.close();
    }
  }

  function groupConsumer(groupId: string, options: Partial<ConsumerOptions> = {}): Consumer {
    const consumer = new Consumer({ bootstrapServers, groupId, enableAutoCommit: false, ...options });
    consumer.assign([tp]);
    return consumer;
  }

  async function logEnd(): Promise<number> {
    const [latest] = await admin.listOffsets([{ ...tp, spec: 'latest' }]);
    return latest!.offset;
  }

  async function pollFor(consumer: Consumer, ms: number): Promise<ConsumerRecord[]> {
    const out: ConsumerRecord[] = [];
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) out.push(...(await consumer.poll(100)));
    return out;
  }

  it('a committed position past the end of its epoch moves to the end offset the leader gives', async () => {
    await commitPastEnd('truncated-reset', 100, leaderEpoch);
    validated.length = 0;
    const consumer = groupConsumer('truncated-reset', { autoOffsetReset: 'earliest' });
    try {
      assert.deepEqual(await pollFor(consumer, 800), [], 'nothing is read again from the start');
      assert.equal(await consumer.position(tp), RECORDS, 'the position is the divergent end offset');
      assert.ok(validated.length > 0, 'the consumer sent OffsetsForLeaderEpoch');
      const producer = new Producer({ bootstrapServers });
      try {
        await producer.send({ ...tp, value: Buffer.from('after') });
      } finally {
        await producer.close();
      }
      const next = await pollFor(consumer, 800);
      assert.deepEqual(
        next.map((r) => r.offset),
        [RECORDS],
      );
      await consumer.commit();
      const [stored] = await admin.listConsumerGroupOffsets('truncated-reset', [tp]);
      assert.deepEqual(
        { offset: stored?.offset, leaderEpoch: stored?.leaderEpoch },
        { offset: 4, leaderEpoch },
      );
    } finally {
      await consumer.close();
    }
  });

  it('auto.offset.reset=none: poll() throws LogTruncationError with the divergent offset', async () => {
    await commitPastEnd('truncated-none', 100, leaderEpoch);
    const consumer = groupConsumer('truncated-none', { autoOffsetReset: 'none' });
    try {
      const err = await pollFor(consumer, 1500).then(
        () => assert.fail('poll() returned without an error'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof LogTruncationError, `a LogTruncationError, not ${String(err)}`);
      assert.ok(err instanceof KafkaProtocolError && err.code === ErrorCode.OFFSET_OUT_OF_RANGE);
      const key = `${TOPIC}-0`;
      assert.deepEqual(err.offsetOutOfRangePartitions.get(key), 100);
      assert.deepEqual(err.divergentOffsets.get(key), { ...tp, offset: await logEnd(), leaderEpoch });
    } finally {
      await consumer.close();
    }
  });

  it('seek() with a leader epoch validates the position too', async () => {
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest' });
    try {
      consumer.assign([tp]);
      consumer.seek(tp, 50, leaderEpoch);
      assert.deepEqual(await pollFor(consumer, 500), [], 'nothing is read again from the start');
      assert.equal(await consumer.position(tp), await logEnd());
    } finally {
      await consumer.close();
    }
  });

  it('a committed offset out of range without an epoch is reset by auto.offset.reset', async () => {
    await commitPastEnd('out-of-range', 100);
    const consumer = groupConsumer('out-of-range', { autoOffsetReset: 'earliest' });
    try {
      const records = await pollFor(consumer, 1000);
      assert.deepEqual(
        records.map((r) => r.offset).slice(0, RECORDS),
        [0, 1, 2],
        'read from the earliest offset',
      );
    } finally {
      await consumer.close();
    }
  });

  it('position() before any poll() answers the validated position: the divergent end offset', async () => {
    await commitPastEnd('position-validated', 100, leaderEpoch);
    validated.length = 0;
    const consumer = groupConsumer('position-validated', { autoOffsetReset: 'earliest' });
    try {
      assert.equal(
        await consumer.position(tp),
        await logEnd(),
        'not the committed offset awaiting validation',
      );
      assert.ok(validated.length > 0, 'the consumer sent OffsetsForLeaderEpoch');
    } finally {
      await consumer.close();
    }
  });

  it('position() under auto.offset.reset=none throws LogTruncationError', async () => {
    await commitPastEnd('position-truncated-none', 100, leaderEpoch);
    const consumer = groupConsumer('position-truncated-none', { autoOffsetReset: 'none' });
    try {
      const err = await consumer.position(tp, 5000).then(
        (p) => assert.fail(`position() answered ${p}`),
        (e: unknown) => e,
      );
      assert.ok(err instanceof LogTruncationError, `a LogTruncationError, not ${String(err)}`);
      assert.deepEqual(err.divergentOffsets.get(`${TOPIC}-0`), {
        ...tp,
        offset: await logEnd(),
        leaderEpoch,
      });
    } finally {
      await consumer.close();
    }
  });

  it('position() times out while the position cannot be validated', async () => {
    await commitPastEnd('position-timeout', 2, leaderEpoch);
    let release: () => void = () => {};
    holdValidation = new Promise<void>((resolve) => {
      release = resolve;
    });
    const consumer = groupConsumer('position-timeout', { autoOffsetReset: 'earliest' });
    try {
      const started = Date.now();
      const err = await consumer.position(tp, 400).then(
        (p) => assert.fail(`position() answered ${p} before validation`),
        (e: unknown) => e,
      );
      assert.ok(err instanceof RequestTimeoutError, `a RequestTimeoutError, not ${String(err)}`);
      assert.match(
        err.message,
        /Timeout of 400ms expired before the position for partition position-validation-0/,
      );
      assert.ok(Date.now() - started >= 350, 'it waited for its timeout');
      holdValidation = null;
      release();
      assert.equal(await consumer.position(tp), 2, 'the valid committed position once the leader answers');
    } finally {
      holdValidation = null;
      release();
      await consumer.close();
    }
  });
});
