// What `brook cluster status` says of a gone broker, from the state the controller persisted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { goneBrokerNote } from '../../src/cli/self-healing-report.js';
import type { PartitionId } from '../../src/common/ids.js';

test("a gone broker with partitions an operator's cancel left on it says so, not only that nothing moves", () => {
  const failedAtMs = Date.parse('2026-01-01T00:00:00.000Z');
  const note = goneBrokerNote(
    4,
    {
      registered: new Set([1, 2, 3]),
      failed: new Map([
        [
          4,
          {
            failedAtMs,
            moving: [],
            operatorCancelled: [{ topic: 't', partition: 0 as PartitionId }],
          },
        ],
      ]),
    },
    60_000,
    failedAtMs + 120_000,
  );
  assert.match(note ?? '', /1 partitions stay on it: an operator cancelled their moves/);
});
