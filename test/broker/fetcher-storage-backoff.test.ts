// Issue 13, N1: a follower whose local writes fail for the disk's sake (ENOSPC with the disk full) backed off
// replica.fetch.backoff.ms (1 s) between attempts forever. Such failures now double the wait, up to 32 times it;
// failures of the leader or the network keep the plain backoff.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStorageError, storageBackoffMs } from '../../src/broker/cluster/replica-fetchers.js';

describe('replica fetcher: backoff after local storage errors', () => {
  it('tells a failing disk from a failing peer', () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    assert.equal(isStorageError(enospc), true);
    assert.equal(isStorageError(Object.assign(new Error('read-only'), { code: 'EROFS' })), true);
    assert.equal(isStorageError(Object.assign(new Error('reset'), { code: 'ECONNRESET' })), false);
    assert.equal(isStorageError(new Error('connection closed')), false);
    assert.equal(isStorageError(null), false);
  });

  it('doubles the wait for each failure in a row, to 32 times the backoff', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 20].map((n) => storageBackoffMs(1000, n)),
      [1000, 2000, 4000, 8000, 16_000, 32_000, 32_000, 32_000],
    );
  });
});
