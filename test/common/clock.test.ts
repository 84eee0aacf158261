// The clock's timers: a ManualClock fires them only when advanced, in the order of their deadlines, with the clock
// at each deadline; the system clock's fire on the process's timers.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock, sleep, systemClock } from '../../src/common/clock.js';

describe('clock timers', () => {
  it('a manual clock fires due timers in deadline order, each at its deadline, and never cancelled ones', () => {
    const clock = new ManualClock(1_000, 0);
    const fired: string[] = [];
    clock.setTimer(30, () => fired.push(`c@${clock.monotonicMs()}`));
    clock.setTimer(10, () => {
      fired.push(`a@${clock.monotonicMs()}/${clock.nowMs()}`);
      // Set by a firing timer and due within the advance: fires in the same advance.
      clock.setTimer(5, () => fired.push(`b@${clock.monotonicMs()}`));
    });
    const cancelled = clock.setTimer(20, () => fired.push('never'));
    clock.setTimer(10, () => fired.push(`a2@${clock.monotonicMs()}`));
    cancelled.cancel();
    clock.advance(29);
    assert.deepEqual(fired, ['a@10/1010', 'a2@10', 'b@15']);
    assert.equal(clock.monotonicMs(), 29);
    assert.equal(clock.nextTimerDueMs(), 30);
    clock.advance(1);
    assert.deepEqual(fired.at(-1), 'c@30');
    assert.equal(clock.pendingTimers, 0);
    assert.equal(clock.nextTimerDueMs(), null);
    assert.throws(() => clock.advance(-1));
  });

  it('sleep on a manual clock resolves only once the clock has moved that far', async () => {
    const clock = new ManualClock();
    let done = false;
    const slept = sleep(clock, 100).then(() => {
      done = true;
    });
    clock.advance(99);
    await new Promise((r) => setImmediate(r));
    assert.equal(done, false);
    clock.advance(1);
    await slept;
    assert.equal(done, true);
  });

  it('the system clock fires and cancels real timers', async () => {
    let fired = 0;
    const cancelled = systemClock.setTimer(1, () => fired--);
    cancelled.cancel();
    await new Promise<void>((resolve) =>
      systemClock.setTimer(5, () => {
        fired++;
        resolve();
      }),
    );
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(fired, 1);
  });
});
