// EarliestTimer: one timer for many deadlines, firing once at the earliest one armed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { EarliestTimer } from '../../src/client/earliest-timer.js';

test('fires once, at the earliest deadline armed, and not after cancel', async () => {
  const fired: number[] = [];
  const timer = new EarliestTimer(() => fired.push(Date.now()));
  const start = Date.now();
  timer.armBy(start + 400);
  timer.armBy(start + 40); // earlier: replaces the 400 ms one
  timer.armBy(start + 200); // later: the 40 ms one stands
  await sleep(300);
  assert.equal(fired.length, 1, 'once, though armed three times');
  assert.ok(fired[0]! - start < 200, `fired after ${fired[0]! - start} ms, not at a later deadline`);
  await sleep(200);
  assert.equal(fired.length, 1, 'the replaced 400 ms deadline does not fire');

  timer.armBy(Date.now() + 30);
  timer.cancel();
  await sleep(80);
  assert.equal(fired.length, 1, 'cancelled');
  timer.armBy(Date.now() + 10);
  await sleep(80);
  assert.equal(fired.length, 2, 'armed again after firing and after cancel');
});
