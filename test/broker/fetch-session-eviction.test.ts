// Which fetch session a full cache gives up for a new one (max.incremental.fetch.session.cache.slots), as Kafka's
// FetchSessionCache decides over the wire: a new session is safe from eviction by other consumers for the eviction
// time (two minutes), after which a consumer session with more partitions takes the slot of the smallest one,
// while one no larger gets no session (a sessionless answer, session id 0). The broker runs on a clock whose
// monotonic time the test moves forward, so that two minutes pass at once.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Clock, systemClock } from '../../src/common/clock.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { consumerFetchBody, createTopic, fetchPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'session-eviction';
/** Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS, a constant there and here. */
const EVICTION_MS = 120_000;

describe('fetch session eviction from a full cache', () => {
  let skewMs = 0;
  const clock: Clock = { ...systemClock, monotonicMs: () => systemClock.monotonicMs() + skewMs };
  let broker: InProcessBroker | undefined;
  let client: WireClient | undefined;

  before(async () => {
    broker = await startInProcessBroker({ 'max.incremental.fetch.session.cache.slots': 2 }, { clock });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 3, replicationFactor: 1 });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  /** A full fetch (epoch 0) of `partitions` that asks for a session; answers the session id given (0: none). */
  const open = async (partitions: readonly number[]): Promise<number> => {
    const topics = [{ topic: TOPIC, partitions: partitions.map((p) => fetchPartition(p, 0)) }];
    const r = await client!.call(
      ApiKey.FETCH,
      12,
      consumerFetchBody(topics, { minBytes: 0, sessionId: 0, sessionEpoch: 0 }),
    );
    assert.equal(r.errorCode, ErrorCode.NONE);
    return r.sessionId;
  };
  /** An incremental fetch with nothing changed; answers the top-level error code. */
  const touch = async (sessionId: number, epoch: number): Promise<number> => {
    const r = await client!.call(
      ApiKey.FETCH,
      12,
      consumerFetchBody([], { minBytes: 0, sessionId, sessionEpoch: epoch }),
    );
    return r.errorCode;
  };

  it('a larger consumer session evicts the smallest settled one; a new or equal one evicts nothing', async () => {
    const first = await open([0]);
    const second = await open([1]);
    assert.ok(first > 0 && second > 0, 'two sessions fill the two slots');
    assert.equal(await open([0, 1]), 0, 'sessions younger than the eviction time are kept');

    // Both sessions are used again once older than the eviction time: from then on a larger one may take a slot.
    skewMs += EVICTION_MS + 1_000;
    assert.equal(await touch(first, 1), ErrorCode.NONE);
    assert.equal(await touch(second, 1), ErrorCode.NONE);
    assert.equal(await open([2]), 0, 'a session no larger than any evicts none');
    const larger = await open([0, 1]);
    assert.ok(larger > 0, 'a session with more partitions gets a slot');

    // Kafka's order among equals: the lower session id goes.
    const [evicted, kept] = first < second ? [first, second] : [second, first];
    assert.equal(await touch(evicted, 2), ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    assert.equal(await touch(kept, 2), ErrorCode.NONE);
    assert.equal(await touch(larger, 1), ErrorCode.NONE);
  });
});
