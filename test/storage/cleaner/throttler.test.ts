// The cleaner's throttle (log.cleaner.io.max.bytes.per.second) with a fake clock: it waits as long as the rate
// says the bytes of each 100 ms period should have taken, checked every 100 ms or as soon as a period's bytes
// exceed the rate's allowance for one, and a new rate starts a new period.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Throttler, UNTHROTTLED } from '../../../src/storage/cleaner/throttler.js';

function fakeTime(): {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  slept: number[];
  advance: (ms: number) => void;
} {
  let t = 0;
  const slept: number[] = [];
  return {
    now: () => t,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
    slept,
    advance: (ms) => {
      t += ms;
    },
  };
}

test('unthrottled (Kafka default Double.MaxValue) never waits', () => {
  const time = fakeTime();
  const throttler = new Throttler({ bytesPerSecond: UNTHROTTLED, ...time });
  for (let i = 0; i < 100; i++) {
    time.advance(50);
    assert.equal(throttler.maybeThrottle(10 * 1024 * 1024), null);
  }
  assert.equal(time.slept.length, 0);
});

test('bytes faster than the rate wait until the rate is met; slower bytes never wait', async () => {
  const time = fakeTime();
  const throttler = new Throttler({ bytesPerSecond: 1_000_000, ...time });
  // 500 kB in 100 ms at 1 MB/s should have taken 500 ms: 400 ms to wait.
  time.advance(50);
  assert.equal(throttler.maybeThrottle(50_000), null, 'within the allowance of 100 ms: checked at 100 ms');
  time.advance(50);
  const wait = throttler.maybeThrottle(450_000);
  assert.ok(wait !== null);
  await wait;
  assert.deepEqual(time.slept, [400]);
  // 50 kB in 200 ms is below the rate.
  time.advance(200);
  assert.equal(throttler.maybeThrottle(50_000), null);
  assert.equal(throttler.waitedMs, 400);
});

test('a new rate applies from the next check; over a long run the rate holds', async () => {
  const time = fakeTime();
  const throttler = new Throttler({ bytesPerSecond: UNTHROTTLED, ...time });
  throttler.bytesPerSecond = 2_000_000;
  const start = time.now();
  let bytes = 0;
  for (let i = 0; i < 1000; i++) {
    time.advance(1); // 64 KiB per ms is far faster than 2 MB/s
    bytes += 65_536;
    const wait = throttler.maybeThrottle(65_536);
    if (wait !== null) await wait;
  }
  const seconds = (time.now() - start) / 1000;
  const rate = bytes / seconds;
  assert.ok(rate <= 2_000_000 * 1.05 && rate >= 2_000_000 * 0.9, `rate ${rate}`);
});

test('a burst above the allowance of one interval waits at once, even in a pass shorter than 100 ms', async () => {
  const time = fakeTime();
  const throttler = new Throttler({ bytesPerSecond: 50_000, ...time });
  // 64 KiB read at once, 1 ms into the period: at 50 kB/s it should have taken 1311 ms.
  time.advance(1);
  const wait = throttler.maybeThrottle(65_536);
  assert.ok(wait !== null, 'a 64 KiB burst exceeds the 5 kB allowed per 100 ms');
  await wait;
  assert.deepEqual(time.slept, [1310]);
});

test('a new rate starts a new period: time idle before it is no credit', async () => {
  const time = fakeTime();
  const throttler = new Throttler({ bytesPerSecond: UNTHROTTLED, ...time });
  time.advance(10_000);
  throttler.bytesPerSecond = 50_000;
  const wait = throttler.maybeThrottle(100_000);
  assert.ok(wait !== null);
  await wait;
  assert.deepEqual(time.slept, [2000]);
});
