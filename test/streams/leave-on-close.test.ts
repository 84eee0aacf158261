// Whether a closing instance leaves its group: Kafka Streams' consumers do not (StreamsConfig's
// CONSUMER_DEFAULT_OVERRIDES sets internal.leave.group.on.close=false), so the coordinator keeps the member until
// session.timeout.ms and an instance restarting within it does not make the group rebalance around its absence.
// Brook's threads do the same by default; KafkaStreams.CloseOptions with leaveGroup(true) (scaling down), or the
// property `consumer.internal.leave.group.on.close` set true, makes them send LeaveGroup on close; leaveGroup(true)
// removes a static member too (Kafka removes static members with an admin RemoveMembers).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { CloseOptions, KafkaStreams, type StreamsProperties } from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { countByKeyTopology, type StreamsBroker, useStreamsBroker } from './streams-helpers.js';

/** Runs the count as `appId` until RUNNING, closes it, and answers the group's members right after. */
async function membersAfterClose(
  env: StreamsBroker,
  appId: string,
  extra: StreamsProperties,
  options?: CloseOptions,
): Promise<number> {
  const streams = new KafkaStreams(countByKeyTopology('loc-in', 'loc-out', 'counts'), {
    'application.id': appId,
    'bootstrap.servers': env.bootstrap,
    'state.dir': env.dirs[0]!,
    'session.timeout.ms': 30_000,
    ...extra,
  });
  const admin = new Admin({ bootstrapServers: env.bootstrap });
  try {
    await streams.start();
    await waitUntil(
      () => streams.state() === 'RUNNING',
      30_000,
      () => `state ${streams.state()}`,
    );
    await streams.close(options);
    const [group] = await admin.describeGroups([appId]);
    return group!.members.length;
  } finally {
    await streams.close();
    await admin.close();
  }
}

describe('closing an instance', () => {
  const env = useStreamsBroker({ 'loc-in': 2, 'loc-out': 2 }, 1);

  it('by default (Kafka Streams: internal.leave.group.on.close false) the member stays', async () => {
    assert.equal(await membersAfterClose(env, 'loc-stay', {}), 1);
  });

  it('with CloseOptions leaveGroup(true) the member leaves at once', async () => {
    const options = new KafkaStreams.CloseOptions().leaveGroup(true).timeout(30_000);
    assert.equal(await membersAfterClose(env, 'loc-leave-options', {}, options), 0);
  });

  it('a static member (group.instance.id) stays by default and leaves with CloseOptions leaveGroup(true)', async () => {
    const stat = { 'group.instance.id': 'loc-static-instance' };
    assert.equal(await membersAfterClose(env, 'loc-static-stay', stat), 1);
    const options = new CloseOptions().leaveGroup(true);
    assert.equal(await membersAfterClose(env, 'loc-static-leave', stat, options), 0);
  });

  it('with consumer.internal.leave.group.on.close true the member leaves at once', async () => {
    assert.equal(
      await membersAfterClose(env, 'loc-leave-property', { 'consumer.internal.leave.group.on.close': true }),
      0,
    );
  });
});
