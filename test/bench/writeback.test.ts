// The writeback wait the disk benchmarks use between repetitions: it reads /proc/meminfo and returns at once
// when little is pending, or after its timeout when more is.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pendingWritebackBytes, waitForWriteback } from '../../bench/harness/writeback.js';

test('pending writeback is read from /proc/meminfo, and the wait returns by its threshold or its timeout', async () => {
  const pending = pendingWritebackBytes();
  assert.ok(pending !== undefined && Number.isInteger(pending) && pending >= 0, `pending ${pending}`);
  const quick = await waitForWriteback(Number.MAX_SAFE_INTEGER, 5000);
  assert.ok(quick.waitedMs < 1000, 'nothing to wait for under an unreachable threshold');
  const bounded = await waitForWriteback(-1, 300);
  assert.ok(bounded.waitedMs >= 300 && bounded.waitedMs < 3000, `waited ${bounded.waitedMs} ms`);
});
