// KafkaStreams.close(timeoutMs), Kafka's close(Duration): true once every thread has stopped, false when the close
// takes longer than the timeout (the close goes on, and a later call waits for the same one); a negative timeout
// is refused as Kafka refuses it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CloseOptions, KafkaStreams } from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { countByKeyTopology, useStreamsBroker } from './streams-helpers.js';

describe('KafkaStreams.close(timeoutMs)', () => {
  const env = useStreamsBroker({ 'close-input': 1, 'close-counts': 1 }, 2);

  const instance = (dir: string) =>
    new KafkaStreams(countByKeyTopology('close-input', 'close-counts', 'counts'), {
      'application.id': 'close-timeout',
      'bootstrap.servers': env.bootstrap,
      'state.dir': dir,
    });

  it('answers false when the close outlasts the timeout, true once it is done', async () => {
    const streams = instance(env.dirs[0]!);
    await streams.start();
    await waitUntil(
      () => streams.state() === 'RUNNING',
      30_000,
      () => `state ${streams.state()}`,
    );
    // Stopping the thread with a LeaveGroup (a round trip to the coordinator after the commit) takes more than a
    // millisecond; without it (the default since close leaves the group only when asked) it may not.
    assert.equal(await streams.close(new CloseOptions().timeout(1).leaveGroup(true)), false);
    assert.equal(streams.state(), 'PENDING_SHUTDOWN');
    assert.equal(await streams.close(30_000), true);
    assert.equal(streams.state(), 'NOT_RUNNING');
    assert.equal(await streams.close(0), true, 'closed already');
  });

  it('refuses a negative timeout', async () => {
    const streams = instance(env.dirs[1]!);
    await assert.rejects(() => streams.close(-1), {
      name: 'RangeError',
      message: "Timeout can't be negative.",
    });
    assert.equal(await streams.close(), true);
  });
});
