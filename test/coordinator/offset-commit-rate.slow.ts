// Offset commits per second through a real broker: one connection, commits one after another (each written to
// __consumer_offsets and acknowledged once under the high watermark), then pipelined 64 at a time. Reported as
// diagnostics; the assertions check that every commit succeeded and the last one is what OffsetFetch returns.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { commitOffsets, waitForCoordinator } from '../helpers/offset-commits.js';

describe('offset commit rate', () => {
  const suite = useBrokerWithClient();

  it('commits sequentially and pipelined, every one acknowledged', async (t) => {
    await waitForCoordinator(suite.client, 'rate');
    const count = 2000;
    const sequentialMs = await commitOffsets(suite.client, 'rate', 1, count, 1);
    t.diagnostic(`sequential: ${Math.round((count / sequentialMs) * 1000)} commits/s (4 partitions each)`);
    const pipelinedMs = await commitOffsets(suite.client, 'rate', count + 1, count, 64);
    t.diagnostic(`pipelined by 64: ${Math.round((count / pipelinedMs) * 1000)} commits/s`);
    const last = 2 * count;
    const fetched = await suite.client.call(ApiKey.OFFSET_FETCH, 8, {
      groupId: '',
      topics: [],
      groups: [
        { groupId: 'rate', memberId: null, memberEpoch: -1, topics: [{ name: 't', partitionIndexes: [3] }] },
      ],
      requireStable: true,
    });
    assert.equal(fetched.groups[0].topics[0].partitions[0].committedOffset, BigInt(last));
  });
});
