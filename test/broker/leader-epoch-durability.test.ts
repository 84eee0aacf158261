// KIP-279 entries are durable before anyone acts on them. A broker that becomes leader records where its epoch
// starts (its log end); Kafka's LeaderEpochFileCache.assign writes and flushes leader-epoch-checkpoint before
// makeLeader goes on, so no OffsetForLeaderEpoch answer names an entry that a crash could lose. Brook writes the
// file off the event loop: its answers wait until the file holds the entries they were computed from. The test
// holds the checkpoint's background write (a test gate in atomic-file.ts) and reads the file when the answer
// arrives. Before the fix the answer came at once, while the file did not hold the new epoch yet: for
// OffsetForLeaderEpoch and for a fetch answered with its diverging epoch (KIP-320), both from the cache, and for
// ListOffsets, whose earliest and latest answers name an epoch (the cache's, the partition's) that a consumer then
// validates its position with (Kafka's makeLeader holds the partition's lock across the flush, so none comes first).

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { setBackgroundWriteGateForTests } from '../../src/storage/atomic-file.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { untilValue } from '../helpers/wait.js';
import { consumerFetchBody, createTopic, fetchPartition, WireClient } from '../helpers/wire-client.js';

/** The entries of a leader-epoch-checkpoint as `epoch offset` lines; none when the file is not there yet. */
function fileEntries(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').trim().split('\n').slice(2);
}

describe('leader epoch entries are persisted before a request reports them', () => {
  let dir = '';
  let broker: InProcessBroker | undefined;
  let client: WireClient | undefined;
  /** The checkpoints whose background writes wait, each with what lets it go. */
  const held = new Map<string, { promise: Promise<void>; release: () => void }>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'brook-epoch-durable-'));
    broker = await startInProcessBroker({ 'log.dirs': dir, 'auto.create.topics.enable': false });
    client = await WireClient.connect(broker.host, broker.port);
    setBackgroundWriteGateForTests((path) => held.get(path)?.promise ?? Promise.resolve());
  });
  after(async () => {
    setBackgroundWriteGateForTests(null);
    for (const h of held.values()) h.release();
    client?.close();
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Creates `topic` (one partition, led here at epoch 0 from offset 0) with the write of its leader-epoch-checkpoint
   * held; answers the checkpoint's path and what releases the write.
   */
  async function topicWithHeldCheckpoint(
    topic: string,
  ): Promise<{ checkpoint: string; release: () => void }> {
    const checkpoint = join(dir, `${topic}-0`, 'leader-epoch-checkpoint');
    let release: () => void = () => {};
    const promise = new Promise<void>((resolve) => {
      release = resolve;
    });
    held.set(checkpoint, { promise, release });
    await createTopic(client!, topic, { numPartitions: 1, replicationFactor: 1 });
    await untilValue('the broker leading the partition', async () => {
      const m = await client!.call(ApiKey.METADATA, 9, {
        topics: [{ name: topic }],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      return m.topics[0]?.partitions[0]?.leaderId === 0 ? true : null;
    });
    assert.deepEqual(fileEntries(checkpoint), [], 'the write of the epoch entry is held');
    return { checkpoint, release };
  }

  /**
   * Sends a request, waits 300 ms, releases the held write and answers the response, whether it came before the
   * release, and the checkpoint's entries when it came.
   */
  async function answerWhileHeld(
    apiKey: number,
    version: number,
    body: unknown,
    checkpoint: string,
    release: () => void,
    // biome-ignore lint/suspicious/noExplicitAny: responses are read field by field, as WireClient.call's.
  ): Promise<{ response: any; early: boolean; entriesAtAnswer: string[] }> {
    const answered = client!
      .call(apiKey, version, body)
      .then((response) => ({ response, entriesAtAnswer: fileEntries(checkpoint) }));
    const early = await Promise.race([answered.then(() => true), sleep(300).then(() => false)]);
    release();
    return { ...(await answered), early };
  }

  it('OffsetForLeaderEpoch answers the new epoch only once leader-epoch-checkpoint holds it', async () => {
    const topic = 'kip279-offsets-for-epoch';
    const { checkpoint, release } = await topicWithHeldCheckpoint(topic);
    const { response, early, entriesAtAnswer } = await answerWhileHeld(
      ApiKey.OFFSET_FOR_LEADER_EPOCH,
      4,
      {
        replicaId: -1,
        topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }],
      },
      checkpoint,
      release,
    );
    const p = response.topics[0].partitions[0];
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.equal(p.leaderEpoch, 0);
    assert.equal(p.endOffset, 0n);
    assert.deepEqual(entriesAtAnswer, ['0 0'], 'the file held the entry when the answer came');
    assert.equal(early, false, 'no answer while the entry was not persisted');
  });

  it('a fetch told where its log diverges gets the end of an epoch only once the file holds it', async () => {
    const topic = 'kip279-diverging';
    const { checkpoint, release } = await topicWithHeldCheckpoint(topic);
    // Last fetched epoch 0 at offset 5: this log ends epoch 0 at 0, so the fetcher's log diverged (KIP-320).
    const partition = { ...fetchPartition(0, 5), lastFetchedEpoch: 0 };
    const { response, early, entriesAtAnswer } = await answerWhileHeld(
      ApiKey.FETCH,
      12,
      consumerFetchBody([{ topic, partitions: [partition] }]),
      checkpoint,
      release,
    );
    const p = response.responses[0].partitions[0];
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.deepEqual(p.divergingEpoch, { epoch: 0, endOffset: 0n });
    assert.deepEqual(entriesAtAnswer, ['0 0'], 'the file held the entry when the answer came');
    assert.equal(early, false, 'no answer while the entry was not persisted');
  });

  for (const [name, timestamp] of [
    ['earliest', -2n],
    ['latest', -1n],
  ] as const) {
    it(`ListOffsets answers the ${name} offset and its epoch only once the file holds the epoch`, async () => {
      const topic = `kip279-list-offsets-${name}`;
      const { checkpoint, release } = await topicWithHeldCheckpoint(topic);
      const { response, early, entriesAtAnswer } = await answerWhileHeld(
        ApiKey.LIST_OFFSETS,
        7,
        {
          replicaId: -1,
          isolationLevel: 0,
          topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: 0, timestamp }] }],
        },
        checkpoint,
        release,
      );
      const p = response.topics[0].partitions[0];
      assert.equal(p.errorCode, ErrorCode.NONE);
      assert.equal(p.offset, 0n);
      assert.equal(p.leaderEpoch, 0);
      assert.deepEqual(entriesAtAnswer, ['0 0'], 'the file held the entry when the answer came');
      assert.equal(early, false, 'no answer while the entry was not persisted');
    });
  }
});
