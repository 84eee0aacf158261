// A member's session ends at its deadline (the last heartbeat plus session.timeout.ms), as Kafka's heartbeat
// purgatory ends it, not at the next turn of a periodic check: DeleteGroups sent just after the deadline of a
// static member that stopped heartbeating finds the group empty instead of NON_EMPTY_GROUP.
//
// Timing: each group's deadline is at most its heartbeat's answer time plus the session timeout (the broker set
// it before answering), so a DeleteGroups sent MARGIN_MS after that reaches the broker at least MARGIN_MS after
// the deadline. The groups' deadlines are spread over more than one period of the coordinator's 100 ms deadline
// check, so a check that runs only on that period misses some of them by more than the margin whatever its phase;
// the margin is wide enough for a timer firing late on a busy machine.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode as E } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';

const GROUPS = 10;
const SESSION_MS = 1000;
const MARGIN_MS = 60;
/** Spreads the deadlines over 10 x 15 ms = 150 ms, more than one 100 ms period. */
const STAGGER_MS = 15;

function joinBody(groupId: string, groupInstanceId: string) {
  return {
    groupId,
    sessionTimeoutMs: SESSION_MS,
    rebalanceTimeoutMs: 5000,
    memberId: '',
    groupInstanceId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.alloc(8) }],
    reason: null,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('session expiry at the deadline', () => {
  const suite = useBrokerWithClient({ overrides: { 'group.min.session.timeout.ms': 500 } });

  it('a static member that stopped heartbeating is gone just after its deadline', async () => {
    const { client } = suite;
    for (let i = 0; ; i++) {
      const r = await client.call(ApiKey.FIND_COORDINATOR, 4, {
        key: '',
        keyType: 0,
        coordinatorKeys: ['s'],
      });
      if (r.coordinators[0].errorCode === E.NONE) break;
      assert.ok(i < 150, 'the coordinator became available');
      await sleep(100);
    }
    const members: { group: string; instance: string; memberId: string; generationId: number }[] = [];
    for (let i = 0; i < GROUPS; i++) {
      const group = `static-expiry-${i}`;
      const instance = `instance-${i}`;
      let join = await client.call(ApiKey.JOIN_GROUP, 7, joinBody(group, instance));
      for (let tries = 0; join.errorCode !== E.NONE && tries < 100; tries++) {
        assert.equal(join.errorCode, E.COORDINATOR_LOAD_IN_PROGRESS, `JoinGroup of ${group}`);
        await sleep(100);
        join = await client.call(ApiKey.JOIN_GROUP, 7, joinBody(group, instance));
      }
      const sync = await client.call(ApiKey.SYNC_GROUP, 5, {
        groupId: group,
        generationId: join.generationId,
        memberId: join.memberId,
        groupInstanceId: instance,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId: join.memberId, assignment: Buffer.from('a') }],
      });
      assert.equal(sync.errorCode, E.NONE);
      members.push({ group, instance, memberId: join.memberId, generationId: join.generationId });
    }
    // The last heartbeats, one group every STAGGER_MS.
    const deadlines: number[] = [];
    for (const m of members) {
      const hb = await client.call(ApiKey.HEARTBEAT, 4, {
        groupId: m.group,
        generationId: m.generationId,
        memberId: m.memberId,
        groupInstanceId: m.instance,
      });
      assert.equal(hb.errorCode, E.NONE);
      deadlines.push(performance.now() + SESSION_MS);
      await sleep(STAGGER_MS);
    }
    const late: string[] = [];
    for (const [i, m] of members.entries()) {
      const wait = deadlines[i]! + MARGIN_MS - performance.now();
      if (wait > 0) await sleep(wait);
      const sentLateMs = performance.now() - deadlines[i]!;
      const r = await client.call(ApiKey.DELETE_GROUPS, 2, { groupsNames: [m.group] });
      const code = r.results[0].errorCode;
      if (code !== E.NONE)
        late.push(`${m.group}: ${code} (sent ${sentLateMs.toFixed(0)} ms after the deadline)`);
    }
    assert.deepEqual(late, [], 'every group was empty when DeleteGroups came');
  });
});
