// A task whose checkpoint points before its changelog's first offset (records deleted while the instance was
// away) cannot resume from it: Kafka's restore consumer runs with auto.offset.reset "none", the out-of-range offset
// marks the task corrupted, and its state is wiped and restored from what the changelog still holds. Restoring
// from the changelog's start over the old files instead would keep values the changelog no longer has.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { KafkaStreams } from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import {
  countByKeyTopology,
  leavingGroup,
  type StreamsBroker,
  TopicFollower,
  useStreamsBroker,
} from './streams-helpers.js';

const APP = 'oor';
const CHANGELOG = `${APP}-counts-changelog`;

function start(env: StreamsBroker): KafkaStreams {
  return new KafkaStreams(countByKeyTopology('oor-in', 'oor-out', 'counts'), {
    'application.id': APP,
    'bootstrap.servers': env.bootstrap,
    'state.dir': env.dirs[0]!,
    'commit.interval.ms': 100,
    // One changelog record and one output per input record.
    'statestore.cache.max.bytes': 0,
  });
}

describe('restoring from a changelog whose records before the checkpoint are gone', () => {
  const env = useStreamsBroker({ 'oor-in': 1, 'oor-out': 1 }, 1);

  it('wipes the task state and restores what the changelog holds', async () => {
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    const follower = new TopicFollower(env.bootstrap, 'oor-out', 1);
    follower.start();
    const counts = () => follower.records.map((r) => `${r.key}=${r.value?.readBigInt64BE(0)}`);
    try {
      const first = start(env);
      await first.start();
      for (const _ of [1, 2, 3])
        await producer.send({ topic: 'oor-in', key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () => follower.records.length >= 3,
        30_000,
        () => counts().join(' '),
      );
      await first.close(leavingGroup());
      // While the instance is away the changelog moves on and its records are deleted up to its end: the
      // checkpoint (offset 2) now lies before the first offset (4).
      await producer.send({ topic: CHANGELOG, key: Buffer.from('b'), value: Buffer.alloc(8) });
      const [end] = await admin.listOffsets([{ topic: CHANGELOG, partition: 0, spec: 'latest' }]);
      const [deleted] = await admin.deleteRecords([{ topic: CHANGELOG, partition: 0, offset: end!.offset }]);
      assert.equal(deleted!.lowWatermark, 4, 'three counts and the record written here, all deleted');

      const second = start(env);
      await second.start();
      await producer.send({ topic: 'oor-in', key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () => follower.records.length >= 4,
        30_000,
        () => counts().join(' '),
      );
      await second.close();
      // Kafka's count starts again from what the changelog holds (nothing for a): 1, not 4.
      assert.deepEqual(counts(), ['a=1', 'a=2', 'a=3', 'a=1']);
    } finally {
      await follower.stop();
      await admin.close();
      await producer.close();
    }
  });
});
