// Admin.listConsumerGroupOffsets as Kafka's admin (ListConsumerGroupOffsetsHandler): the groups of one call that share
// a coordinator go in one OffsetFetch of version 8 or later (its groups array), with requireStable as asked; a group
// answered COORDINATOR_LOAD_IN_PROGRESS is asked again, one answered NOT_COORDINATOR is looked up again first, and a
// group answered GROUP_AUTHORIZATION_FAILED fails alone while the others are listed. A broker that serves OffsetFetch
// only up to version 7 gets one request per group. The single-group form keeps its answer. Against an in-process
// broker whose interceptor reads the OffsetFetch requests and rewrites answers.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { CallTimeoutError } from '../../src/client/errors.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { OffsetFetchRequest, OffsetFetchResponse } from '../../src/protocol/messages/09-offset-fetch.js';
import type { FindCoordinatorResponse } from '../../src/protocol/messages/10-find-coordinator.js';
import type { ApiVersionsResponse } from '../../src/protocol/messages/18-api-versions.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'list-group-offsets-batched';
const G1 = 'list-offsets-g1';
const G2 = 'list-offsets-g2';
const EMPTY = 'list-offsets-empty';
/** A group whose FindCoordinator the broker answers GROUP_AUTHORIZATION_FAILED. */
const DENIED = 'list-offsets-denied';

/** The client id of the deadline test's admin, whose last retry may arrive during the next test. */
const DEADLINE_CLIENT = 'deadline-admin';

interface SeenFetch {
  clientId: string | null;
  version: number;
  groups: string[];
  requireStable: boolean;
}

describe('Admin.listConsumerGroupOffsets batched per coordinator', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  const fetches: SeenFetch[] = [];
  let findCoordinators = 0;
  /** Per group, the error codes the next OffsetFetch answers give it instead of the broker's answer, in order. */
  const injected = new Map<string, number[]>();
  /** The highest OffsetFetch version the broker's ApiVersions advertises (none: its own). */
  let offsetFetchMax: number | null = null;

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 2, replicationFactor: 1 }]);
    await admin.alterConsumerGroupOffsets(G1, [
      { topic: TOPIC, partition: 0, offset: 3 },
      { topic: TOPIC, partition: 1, offset: 4 },
    ]);
    await admin.alterConsumerGroupOffsets(G2, [{ topic: TOPIC, partition: 1, offset: 7, metadata: 'm' }]);
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.FIND_COORDINATOR) {
        findCoordinators++;
        return request.handle().then((r) => {
          const res = r as FindCoordinatorResponse;
          for (const c of res.coordinators)
            if (c.key === DENIED)
              Object.assign(c, { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, nodeId: -1 });
          return res;
        });
      }
      if (request.apiKey === ApiKey.API_VERSIONS && offsetFetchMax !== null) {
        const max = offsetFetchMax;
        return request.handle().then((r) => {
          const res = r as ApiVersionsResponse;
          for (const k of res.apiKeys) if (k.apiKey === ApiKey.OFFSET_FETCH) k.maxVersion = max;
          return res;
        });
      }
      if (request.apiKey !== ApiKey.OFFSET_FETCH) return undefined;
      const body = request.body as OffsetFetchRequest;
      const groups = request.apiVersion >= 8 ? body.groups.map((g) => g.groupId) : [body.groupId];
      fetches.push({
        clientId: request.header.clientId,
        version: request.apiVersion,
        groups,
        requireStable: body.requireStable,
      });
      return request.handle().then((r) => {
        const res = r as OffsetFetchResponse;
        for (const g of res.groups) {
          const code = injected.get(g.groupId)?.shift();
          if (code !== undefined) {
            g.errorCode = code;
            g.topics = [];
          }
        }
        return res;
      });
    });
  });
  beforeEach(() => {
    fetches.length = 0;
    findCoordinators = 0;
    injected.clear();
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  it('several groups go in one OffsetFetch v8+ with requireStable, each answered apart', async () => {
    const listed = await admin.listConsumerGroupOffsets(
      new Map([
        [G1, {}],
        [G2, { topicPartitions: [{ topic: TOPIC, partition: 1 }] }],
        [EMPTY, {}],
      ]),
      { requireStable: true },
    );
    assert.equal(fetches.length, 1, 'one OffsetFetch for the three groups of one coordinator');
    assert.ok(fetches[0]!.version >= 8, `version ${fetches[0]!.version}`);
    assert.deepEqual([...fetches[0]!.groups].sort(), [EMPTY, G1, G2]);
    assert.equal(fetches[0]!.requireStable, true);
    assert.equal(findCoordinators, 1, 'the three coordinators looked up in one FindCoordinator');
    assert.deepEqual(
      listed.get(G1)?.offsets.map((o) => [o.partition, o.offset]),
      [
        [0, 3],
        [1, 4],
      ],
    );
    assert.deepEqual(listed.get(G2)?.offsets, [
      { topic: TOPIC, partition: 1, offset: 7, metadata: 'm', leaderEpoch: -1 },
    ]);
    assert.deepEqual(listed.get(EMPTY), { offsets: [], error: null });
  });

  it('the single-group form is one group of an OffsetFetch v8+', async () => {
    const listed = await admin.listConsumerGroupOffsets(G1);
    assert.deepEqual(
      listed.map((o) => [o.partition, o.offset]),
      [
        [0, 3],
        [1, 4],
      ],
    );
    assert.equal(fetches.length, 1);
    assert.ok(fetches[0]!.version >= 8, `version ${fetches[0]!.version}`);
    assert.deepEqual(fetches[0]!.groups, [G1]);
    assert.equal(fetches[0]!.requireStable, false);
  });

  it('a loading or moved coordinator is asked again for its group; an unauthorized group fails alone', async () => {
    injected.set(G1, [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR]);
    injected.set(G2, [ErrorCode.GROUP_AUTHORIZATION_FAILED]);
    const listed = await admin.listConsumerGroupOffsets({ [G1]: {}, [G2]: {} });
    assert.deepEqual(
      fetches.map((f) => [...f.groups].sort()),
      [[G1, G2], [G1], [G1]],
      'the retried group goes alone',
    );
    assert.equal(
      findCoordinators,
      2,
      "one lookup of both, and G1's after NOT_COORDINATOR (not after the load)",
    );
    assert.equal(listed.get(G1)?.error, null);
    assert.equal(listed.get(G1)?.offsets.length, 2);
    assert.equal(listed.get(G2)?.error?.code, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.deepEqual(listed.get(G2)?.offsets, []);
    // The single-group form throws its group's error, as before.
    injected.set(G2, [ErrorCode.GROUP_AUTHORIZATION_FAILED]);
    await assert.rejects(admin.listConsumerGroupOffsets(G2), { code: ErrorCode.GROUP_AUTHORIZATION_FAILED });
  });

  it('at the call deadline only the groups still unanswered fail, with a timeout', async () => {
    // Its own client id: an OffsetFetch it sent just before its deadline can reach the broker after this test.
    const quick = new Admin({
      bootstrapServers,
      clientId: DEADLINE_CLIENT,
      retryBackoffMs: 10,
      retryBackoffMaxMs: 50,
    });
    try {
      // G2's coordinator stays loading; G1 is answered in the first request.
      injected.set(G2, new Array<number>(10_000).fill(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS));
      const started = Date.now();
      const listed = await quick.listConsumerGroupOffsets({ [G1]: {}, [G2]: {} }, { timeoutMs: 1_000 });
      assert.ok(Date.now() - started >= 900, 'answered at the deadline');
      assert.equal(listed.get(G1)?.error, null);
      assert.deepEqual(
        listed.get(G1)?.offsets.map((o) => [o.partition, o.offset]),
        [
          [0, 3],
          [1, 4],
        ],
      );
      const timedOut = listed.get(G2)?.error;
      assert.equal(timedOut?.code, ErrorCode.REQUEST_TIMED_OUT, `G2 timed out, got ${String(timedOut)}`);
      assert.ok(timedOut?.cause instanceof CallTimeoutError, 'the call timeout is its cause');
      assert.deepEqual(listed.get(G2)?.offsets, []);
      // The single-group form still throws the call's timeout.
      injected.set(G2, new Array<number>(10_000).fill(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS));
      await assert.rejects(
        quick.listConsumerGroupOffsets(G2, undefined, { timeoutMs: 500 }),
        CallTimeoutError,
      );
    } finally {
      await quick.close();
    }
  });

  it('a group whose coordinator lookup is refused fails alone', async () => {
    const listed = await admin.listConsumerGroupOffsets(
      new Map([
        [DENIED, {}],
        [G2, {}],
      ]),
    );
    assert.equal(listed.get(DENIED)?.error?.code, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.equal(listed.get(G2)?.offsets[0]?.offset, 7);
    assert.deepEqual(
      fetches.filter((f) => f.clientId !== DEADLINE_CLIENT).map((f) => f.groups),
      [[G2]],
    );
  });

  it('a broker with OffsetFetch up to v7 gets one request per group', async () => {
    offsetFetchMax = 7;
    const old = new Admin({ bootstrapServers });
    try {
      const listed = await old.listConsumerGroupOffsets(
        new Map([
          [G1, {}],
          [G2, {}],
        ]),
      );
      assert.deepEqual(fetches.map((f) => [f.version, f.groups]).sort(), [
        [7, [G1]],
        [7, [G2]],
      ]);
      assert.equal(listed.get(G1)?.offsets.length, 2);
      assert.equal(listed.get(G2)?.offsets[0]?.offset, 7);
    } finally {
      offsetFetchMax = null;
      await old.close();
    }
  });
});
