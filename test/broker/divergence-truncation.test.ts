// KIP-320 on the follower's side: where a follower truncates when the leader answers a diverging epoch in a fetch
// response (Kafka's AbstractFetcherThread.getOffsetTruncationState), on a real log with three leader epochs.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { divergenceTruncationOffset } from '../../src/broker/cluster/replica-fetchers.js';
import { toOffset } from '../../src/common/ids.js';
import { openHarness } from '../storage/log-harness.js';

describe('truncation on a diverging epoch', () => {
  it('cuts where the logs agree, as Kafka does', (t) => {
    const h = openHarness(t);
    // Offsets 0-2 of epoch 0, 3-5 of epoch 2, 6-7 of epoch 3.
    for (let i = 0; i < 3; i++) h.append({}, 0);
    for (let i = 0; i < 3; i++) h.append({}, 2);
    for (let i = 0; i < 2; i++) h.append({}, 3);
    const log = h.log;
    assert.equal(log.logEndOffset, 8);
    log.setHighWatermark(toOffset(2));
    // The leader ends epoch 2 at 4: both have epoch 2, the smaller end wins.
    assert.equal(divergenceTruncationOffset(log, 2, 4), 4);
    // The leader ends epoch 2 later than this log does: this log's end of it.
    assert.equal(divergenceTruncationOffset(log, 2, 7), 6);
    // The leader's epoch 1 is unknown here (this log went from 0 to 2): to the end of epoch 0 here, and the
    // next fetch (last fetched epoch 0) asks again.
    assert.equal(divergenceTruncationOffset(log, 1, 5), 3);
    // An epoch newer than any here: the leader's end offset.
    assert.equal(divergenceTruncationOffset(log, 9, 5), 5);
    // No end offset: the high watermark. An end offset without an epoch: that offset.
    assert.equal(divergenceTruncationOffset(log, -1, -1), 2);
    assert.equal(divergenceTruncationOffset(log, -1, 5), 5);
    // Never past the log end.
    assert.equal(divergenceTruncationOffset(log, 3, 20), 8);
  });
});
