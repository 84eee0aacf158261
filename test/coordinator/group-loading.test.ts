// What a member hears from a coordinator that is still loading its group's __consumer_offsets partition (a broker
// that has just become its leader), as Kafka's GroupCoordinator in a ZooKeeper-mode broker answers:
// - SyncGroup: REBALANCE_IN_PROGRESS. The rebalance the member was in is lost with the old coordinator, and the
//   member must join again; COORDINATOR_LOAD_IN_PROGRESS is an error the Java consumer's SyncGroup handler does not
//   expect (it raises "Unexpected error from SyncGroup", which poll() throws to the application).
// - Heartbeat: NONE, blindly; the loaded group gives its members a fresh session.
// - LeaveGroup, JoinGroup and OffsetCommit: COORDINATOR_LOAD_IN_PROGRESS, which clients retry.
//
// The broker runs in this process: its request interceptor makes the coordinator take the partition up again
// (as on a leadership change) just before the request's handler runs, so the handler finds the partition loading.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GroupCoordinator } from '../../src/coordinator/group/group-coordinator.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, loadingOnNext, startInProcessBroker } from '../helpers/in-process-broker.js';
import { untilValue } from '../helpers/wait.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const E = ErrorCode;
const GROUP = 'loading-group';
const TOPIC = 'loading-input';

function joinBody(memberId: string) {
  return {
    groupId: GROUP,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.alloc(8) }],
    reason: null,
  };
}

describe('group APIs while the coordinator loads the group partition', () => {
  let broker: InProcessBroker;
  let client: WireClient;
  let memberId: string;
  let generationId: number;

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 1, replicationFactor: 1 });
    // FindCoordinator creates __consumer_offsets; a member id once the partition is led and loaded.
    const first = await untilValue('the group coordinator', async () => {
      await client.call(ApiKey.FIND_COORDINATOR, 4, { key: '', keyType: 0, coordinatorKeys: [GROUP] });
      const r = await client.call(ApiKey.JOIN_GROUP, 7, joinBody(''));
      return r.errorCode === E.MEMBER_ID_REQUIRED ? r : null;
    });
    // The member's JoinGroup is answered; the group waits in CompletingRebalance for its SyncGroup.
    const joined = await client.call(ApiKey.JOIN_GROUP, 7, joinBody(first.memberId));
    assert.equal(joined.errorCode, E.NONE);
    memberId = joined.memberId;
    generationId = joined.generationId;
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  /** Makes the next request of `apiKey` find the group partition loading; the other requests pass. */
  function loadingFor(apiKey: number): void {
    const coordinator = (broker.broker as unknown as { groupCoordinator: GroupCoordinator }).groupCoordinator;
    loadingOnNext(broker, apiKey, coordinator);
  }

  it('SyncGroup is answered REBALANCE_IN_PROGRESS, so that the member joins again', async () => {
    for (const version of [0, 5]) {
      loadingFor(ApiKey.SYNC_GROUP);
      const r = await client.call(ApiKey.SYNC_GROUP, version, {
        groupId: GROUP,
        generationId,
        memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId, assignment: Buffer.alloc(0) }],
      });
      assert.equal(r.errorCode, E.REBALANCE_IN_PROGRESS, `SyncGroup v${version}`);
    }
  });

  it('Heartbeat is answered NONE', async () => {
    loadingFor(ApiKey.HEARTBEAT);
    const r = await client.call(ApiKey.HEARTBEAT, 4, {
      groupId: GROUP,
      generationId,
      memberId,
      groupInstanceId: null,
    });
    assert.equal(r.errorCode, E.NONE);
  });

  it('LeaveGroup, JoinGroup and OffsetCommit are answered COORDINATOR_LOAD_IN_PROGRESS', async () => {
    loadingFor(ApiKey.LEAVE_GROUP);
    const left = await client.call(ApiKey.LEAVE_GROUP, 3, {
      groupId: GROUP,
      memberId: '',
      members: [{ memberId, groupInstanceId: null, reason: null }],
    });
    assert.equal(left.errorCode, E.COORDINATOR_LOAD_IN_PROGRESS, 'LeaveGroup');
    loadingFor(ApiKey.JOIN_GROUP);
    const joined = await client.call(ApiKey.JOIN_GROUP, 7, joinBody(memberId));
    assert.equal(joined.errorCode, E.COORDINATOR_LOAD_IN_PROGRESS, 'JoinGroup');
    loadingFor(ApiKey.OFFSET_COMMIT);
    const committed = await client.call(ApiKey.OFFSET_COMMIT, 8, {
      groupId: GROUP,
      generationIdOrMemberEpoch: generationId,
      memberId,
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [
        {
          name: TOPIC,
          partitions: [
            {
              partitionIndex: 0,
              committedOffset: 1n,
              committedLeaderEpoch: -1,
              commitTimestamp: -1n,
              committedMetadata: '',
            },
          ],
        },
      ],
    });
    assert.equal(committed.topics[0].partitions[0].errorCode, E.COORDINATOR_LOAD_IN_PROGRESS, 'OffsetCommit');
  });
});
