// Fifty members in one classic group: one join phase answers them all in a single generation, the leader's
// assignment reaches each member, and a departure rebalances the other forty-nine. The time the coordinator
// spends is reported (node --test prints diagnostics) as a rough measure; the assertions are about correctness.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.js';
import { silentLogger } from '../../src/common/logger.js';
import type { JoinResult } from '../../src/coordinator/group/classic-group.js';
import { GroupCoordinator, type JoinRequest } from '../../src/coordinator/group/group-coordinator.js';
import type { EncodedRecord } from '../../src/coordinator/group/group-records.js';
import { ErrorCode } from '../../src/protocol/errors.js';

const MEMBERS = 50;

function joinRequest(memberId: string, clientId: string): JoinRequest {
  return {
    groupId: 'big',
    memberId,
    groupInstanceId: null,
    clientId,
    clientHost: '/127.0.0.1',
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 30_000,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from(clientId) }],
    requireKnownMemberId: true,
    supportsSkippingAssignment: true,
  };
}

describe('a classic group of fifty members', () => {
  it('settles in one generation, hands out every assignment, and rebalances after a departure', async (t) => {
    const clock = new ManualClock();
    const appended: EncodedRecord[][] = [];
    const coordinator = new GroupCoordinator({
      config: {
        groupMinSessionTimeoutMs: 6_000,
        groupMaxSessionTimeoutMs: 1_800_000,
        groupMaxSize: 100,
        groupInitialRebalanceDelayMs: 3_000,
        offsetsRetentionMinutes: 10,
        offsetsRetentionCheckIntervalMs: 600_000,
        offsetMetadataMaxBytes: 4096,
      },
      clock,
      storage: {
        append: async (_p, records) => {
          appended.push([...records]);
          return ErrorCode.NONE;
        },
        readAll: () => [],
      },
      logger: silentLogger,
      partitionCount: () => 1,
      defer: (fn) => fn(),
    });
    coordinator.onLeadershipChange(0, true);
    const started = performance.now();
    const joins: Promise<JoinResult>[] = [];
    for (let i = 0; i < MEMBERS; i++) {
      const first = await coordinator.join(joinRequest('', `c${i}`));
      assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
      joins.push(coordinator.join(joinRequest(first.memberId, `c${i}`)));
    }
    // The initial delay runs out, is extended once because members arrived during it, then ends.
    let settled = false;
    void Promise.all(joins).then(() => {
      settled = true;
    });
    let delays = 0;
    while (!settled) {
      assert.ok(delays < 10, 'the join phase never ended');
      clock.advance(3_000);
      coordinator.tick();
      delays++;
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(delays, 2);
    const results = await Promise.all(joins);
    assert.ok(results.every((r) => r.errorCode === 0 && r.generationId === 1));
    const leader = results.find((r) => r.members.length > 0)!;
    assert.equal(leader.members.length, MEMBERS);
    const syncs = results.map((r) =>
      coordinator.sync({
        groupId: 'big',
        generationId: 1,
        memberId: r.memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments:
          r === leader
            ? leader.members.map((m) => ({
                memberId: m.memberId,
                assignment: Buffer.from(`for ${m.memberId}`),
              }))
            : [],
      }),
    );
    const synced = await Promise.all(syncs);
    t.diagnostic(
      `${MEMBERS} members joined and synced in ${(performance.now() - started).toFixed(1)} ms of coordinator time`,
    );
    for (const [i, s] of synced.entries())
      assert.equal(s.assignment.toString(), `for ${results[i]!.memberId}`);
    assert.equal(coordinator.groupState('big'), 'Stable');
    assert.equal(appended.length, 1, 'one group metadata record for the generation');

    const rebalanceStarted = performance.now();
    coordinator.leave('big', [{ memberId: results[0]!.memberId, groupInstanceId: null }]);
    const rejoins = results.slice(1).map((r) => coordinator.join(joinRequest(r.memberId, 'again')));
    const second = await Promise.all(rejoins);
    t.diagnostic(`49 members rejoined in ${(performance.now() - rebalanceStarted).toFixed(1)} ms`);
    assert.ok(second.every((r) => r.generationId === 2));
    assert.equal(second.find((r) => r.members.length > 0)!.members.length, MEMBERS - 1);
  });
});
