// The "topic:partition" keys of the runtime's maps: built and read by one pair of functions, the read splitting
// at the last ':'; a checkpoint file written from such keys reads back to the same keys.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkpointPath, readCheckpoint, writeCheckpoint } from '../../src/streams/runtime/checkpoint.js';
import { partitionKey, topicPartitionOfKey } from '../../src/streams/runtime/partition-key.js';

describe('partition keys', () => {
  it('round-trips, splitting at the last colon', () => {
    for (const tp of [
      { topic: 'app-counts-changelog', partition: 0 },
      { topic: 'a.b_c-d', partition: 127 },
      { topic: 'odd:name', partition: 3 },
    ])
      assert.deepEqual(topicPartitionOfKey(partitionKey(tp)), tp);
    assert.equal(partitionKey({ topic: 't', partition: 5 }), 't:5');
  });

  it("a checkpoint holds Kafka's 'topic partition offset' lines and reads back to the keys", () => {
    const dir = mkdtempSync(join(tmpdir(), 'partition-key-'));
    try {
      const offsets = new Map([
        ['app-a-changelog:0', 41],
        ['app-b-changelog:12', 7],
      ]);
      writeCheckpoint(dir, offsets);
      assert.equal(
        readFileSync(checkpointPath(dir), 'utf8'),
        '0\n2\napp-a-changelog 0 41\napp-b-changelog 12 7\n',
      );
      assert.deepEqual(readCheckpoint(dir), offsets);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
