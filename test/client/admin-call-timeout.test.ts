// Admin calls against a group coordinator that stays loading, as Kafka's admin client (KafkaAdminClient: retries
// default Integer.MAX_VALUE, each call bounded by its timeoutMs or default.api.timeout.ms, exponential backoff from
// retry.backoff.ms to retry.backoff.max.ms): the call retries COORDINATOR_LOAD_IN_PROGRESS until its deadline and
// then fails with a timeout whose cause is the last error, not after a fixed count of retries. Against an in-process
// broker whose interceptor makes the coordinator take its partition up again before each request of the API, so the
// real handler answers COORDINATOR_LOAD_IN_PROGRESS every time.

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { KafkaProtocolError, RequestTimeoutError } from '../../src/client/errors.js';
import type { GroupCoordinator } from '../../src/coordinator/group/group-coordinator.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, onKey, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'admin-call-timeout';
const GROUP = 'admin-call-timeout-group';

describe('admin calls retry until their timeout', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let setup: Admin;
  let attempts = 0;

  /** Every request of `apiKey` finds the group partition loading, as right after a leadership change. */
  function loadingAlways(apiKey: number): void {
    const coordinator = (broker.broker as unknown as { groupCoordinator: GroupCoordinator }).groupCoordinator;
    broker.interception.set(
      onKey(apiKey, (request) => {
        attempts++;
        coordinator.onLeadershipChange(0, false);
        coordinator.onLeadershipChange(0, true);
        return request.handle();
      }),
    );
  }

  /** A timeout at about `timeoutMs` whose cause is the loading coordinator's error, after many attempts. */
  async function assertTimedOut(call: Promise<unknown>, timeoutMs: number): Promise<void> {
    const started = Date.now();
    const err = await call.then(
      () => assert.fail('the call succeeded against a loading coordinator'),
      (e: unknown) => e,
    );
    const elapsed = Date.now() - started;
    assert.ok(err instanceof RequestTimeoutError, `a timeout, got ${String(err)}`);
    // The cause is the last attempt's failure: the loading coordinator's error, or, when the deadline came while an
    // attempt was in flight (a loaded machine), that attempt's timeout (Kafka's cause is then the disconnect).
    const cause = err.cause;
    if (!(cause instanceof RequestTimeoutError)) {
      assert.ok(cause instanceof KafkaProtocolError, `its cause the last error, got ${String(cause)}`);
      assert.equal(cause.code, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    }
    assert.ok(elapsed >= timeoutMs - 100, `failed after ${elapsed} ms, before its ${timeoutMs} ms timeout`);
    assert.ok(
      elapsed < timeoutMs + 2_000,
      `failed after ${elapsed} ms, long after its ${timeoutMs} ms timeout`,
    );
    // With a backoff of 10 to 50 ms, a fixed count of 10 or 20 retries is spent well before the timeout.
    assert.ok(attempts > 21, `${attempts} attempts`);
  }

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    setup = new Admin({ bootstrapServers });
    await setup.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    await setup.alterConsumerGroupOffsets(GROUP, [{ topic: TOPIC, partition: 0, offset: 5 }]);
  });
  afterEach(() => {
    broker.interception.clear();
    attempts = 0;
  });
  after(async () => {
    await setup?.close();
    await broker?.stop();
  });

  it('describeGroups retries until its timeoutMs, then times out with the last error as cause', async () => {
    const admin = new Admin({ bootstrapServers, retryBackoffMs: 10, retryBackoffMaxMs: 50 });
    try {
      await admin.describeGroups([GROUP]); // connected, coordinator known
      loadingAlways(ApiKey.DESCRIBE_GROUPS);
      await assertTimedOut(admin.describeGroups([GROUP], { timeoutMs: 2_500 }), 2_500);
      broker.interception.clear();
      const [described] = await admin.describeGroups([GROUP], { timeoutMs: 2_500 });
      assert.equal(described?.error, null);
    } finally {
      await admin.close();
    }
  });

  it('listConsumerGroupOffsets without timeoutMs retries until default.api.timeout.ms', async () => {
    const admin = new Admin({
      bootstrapServers,
      retryBackoffMs: 10,
      retryBackoffMaxMs: 50,
      defaultApiTimeoutMs: 2_000,
    });
    try {
      loadingAlways(ApiKey.OFFSET_FETCH);
      await assertTimedOut(admin.listConsumerGroupOffsets(GROUP), 2_000);
      attempts = 0;
      // The several-group form answers each group apart: this one with REQUEST_TIMED_OUT, the call's timeout as
      // its cause (Kafka fails that group's future with a TimeoutException).
      const timedOut = admin.listConsumerGroupOffsets(new Map([[GROUP, {}]])).then((listed) => {
        const error = listed.get(GROUP)?.error;
        assert.equal(error?.code, ErrorCode.REQUEST_TIMED_OUT, `the group timed out, got ${String(error)}`);
        throw error?.cause;
      });
      await assertTimedOut(timedOut, 2_000);
      broker.interception.clear();
      const offsets = await admin.listConsumerGroupOffsets(GROUP);
      assert.deepEqual(
        offsets.map((o) => [o.partition, o.offset]),
        [[0, 5]],
      );
    } finally {
      await admin.close();
    }
  });

  it('deleteGroups retries until its timeoutMs too', async () => {
    const admin = new Admin({ bootstrapServers, retryBackoffMs: 10, retryBackoffMaxMs: 50 });
    try {
      loadingAlways(ApiKey.DELETE_GROUPS);
      await assertTimedOut(admin.deleteGroups([GROUP], { timeoutMs: 2_000 }), 2_000);
    } finally {
      await admin.close();
    }
  });
});
