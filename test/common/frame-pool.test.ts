// FramePool (common/frame-pool.ts): a frame's memory is reused only after every reference is given back, never
// after forget(), and never for buffers that did not come from the pool.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FramePool,
  POOLED_FRAME_BYTES_MAX,
  POOLED_FRAME_BYTES_MIN,
  sizeClass,
} from '../../src/common/frame-pool.js';

const KiB = 1024;

describe('FramePool', () => {
  it('hands out exact sizes and reuses a buffer of the same class once its last reference is released', () => {
    const pool = new FramePool(4 * 1024 * KiB);
    const a = pool.acquire(131_172);
    assert.equal(a.length, 131_172);
    assert.equal(a.buffer.byteLength, 144 * KiB);
    pool.retain(a);
    pool.release(a);
    // Still held once: a new frame of the class must not share its memory.
    const b = pool.acquire(140 * KiB);
    assert.notEqual(b.buffer, a.buffer);
    pool.release(a);
    assert.equal(pool.idleByteCount, 144 * KiB);
    const c = pool.acquire(130 * KiB);
    assert.equal(c.buffer, a.buffer, 'the idle buffer of the class is reused');
    assert.equal(c.length, 130 * KiB);
    assert.deepEqual(pool.stats, { allocated: 2, reused: 1, recycled: 1, dropped: 0 });
  });

  it('takes an idle buffer of a larger class, up to twice the size, before allocating; it goes back to its class', () => {
    const pool = new FramePool(4 * 1024 * KiB);
    const big = pool.acquire(200 * KiB); // class 208 KiB
    const bigger = pool.acquire(250 * KiB); // class 256 KiB
    pool.release(bigger);
    pool.release(big);
    // 120 KiB (class 120 KiB) fits the 208 KiB buffer, the smallest idle one within twice its class.
    const a = pool.acquire(120 * KiB);
    assert.equal(a.buffer, big.buffer);
    assert.equal(a.length, 120 * KiB);
    assert.equal(pool.idleByteCount, 256 * KiB);
    // 100 KiB would waste more than half of the 256 KiB buffer: a new one of its own class instead.
    const b = pool.acquire(100 * KiB);
    assert.notEqual(b.buffer, bigger.buffer);
    assert.equal(b.buffer.byteLength, sizeClass(100 * KiB));
    // Released, the borrowed buffer is filed under its own class again and serves a frame of that class.
    pool.release(a);
    assert.equal(pool.acquire(208 * KiB).buffer, big.buffer);
    // A smaller idle buffer never serves a larger frame.
    pool.release(b);
    assert.notEqual(pool.acquire(110 * KiB).buffer, b.buffer);
    assert.deepEqual(pool.stats, { allocated: 4, reused: 2, recycled: 4, dropped: 0 });
  });

  it('never reuses a forgotten buffer, whatever is released later', () => {
    const pool = new FramePool(4 * 1024 * KiB);
    const a = pool.acquire(64 * KiB);
    pool.retain(a);
    pool.forget(a);
    pool.release(a);
    pool.release(a);
    assert.equal(pool.idleByteCount, 0);
    assert.notEqual(pool.acquire(64 * KiB).buffer, a.buffer);
    assert.equal(pool.isPooled(a), false);
  });

  it('ignores buffers it did not hand out, and frames outside the pooled sizes', () => {
    const pool = new FramePool(4 * 1024 * KiB);
    const foreign = Buffer.alloc(64 * KiB);
    pool.retain(foreign);
    pool.release(foreign);
    pool.forget(foreign);
    assert.equal(pool.isPooled(foreign), false);
    const small = pool.acquire(POOLED_FRAME_BYTES_MIN - 1);
    const large = pool.acquire(POOLED_FRAME_BYTES_MAX + 1);
    assert.equal(pool.isPooled(small), false);
    assert.equal(pool.isPooled(large), false);
    pool.release(small);
    pool.release(large);
    assert.equal(pool.idleByteCount, 0);
    assert.deepEqual(pool.stats, { allocated: 0, reused: 0, recycled: 0, dropped: 0 });
  });

  it('keeps at most maxIdleBytes idle; 0 pools nothing', () => {
    const pool = new FramePool(256 * KiB);
    const frames = [pool.acquire(128 * KiB), pool.acquire(128 * KiB), pool.acquire(128 * KiB)];
    for (const f of frames) pool.release(f);
    assert.equal(pool.idleByteCount, 256 * KiB);
    assert.equal(pool.stats.dropped, 1);
    const off = new FramePool(0);
    const f = off.acquire(128 * KiB);
    assert.equal(off.isPooled(f), false);
    off.release(f);
    assert.equal(off.idleByteCount, 0);
  });

  it('keeps idle, beyond maxIdleBytes, what its lender does not use of its own bound', () => {
    const pool = new FramePool(256 * KiB);
    let unused = 0;
    pool.lendIdleBytes(() => unused);
    assert.throws(() => pool.lendIdleBytes(() => 0), /one lender/);
    const frames = Array.from({ length: 6 }, () => pool.acquire(128 * KiB));
    // The lender holds all it may: the bound is maxIdleBytes alone.
    pool.release(frames[0]!);
    pool.release(frames[1]!);
    pool.release(frames[2]!);
    assert.equal(pool.idleByteCount, 256 * KiB);
    assert.equal(pool.stats.dropped, 1);
    // The lender emptied (a tail cache whose topic was deleted): its unused bound is kept idle too.
    unused = 384 * KiB;
    for (const f of frames.slice(3)) pool.release(f);
    assert.equal(pool.idleByteCount, 640 * KiB);
    assert.equal(pool.stats.dropped, 1);
    // Filled again from the idle buffers: five frames reused, nothing allocated.
    const again = Array.from({ length: 5 }, () => pool.acquire(128 * KiB));
    assert.equal(pool.stats.reused, 5);
    assert.equal(pool.stats.allocated, 6);
    // A negative figure lends nothing; the bound is checked when a buffer becomes idle.
    unused = -1024 * KiB;
    for (const f of again) pool.release(f);
    assert.equal(pool.idleByteCount, 256 * KiB);
  });

  it('makes room for a released buffer by dropping idle buffers of the classes used longest ago, never its own', () => {
    const pool = new FramePool(1024 * KiB);
    // The idle list filled by produce frames of two classes, 128 KiB used before 256 KiB.
    const small = [pool.acquire(128 * KiB), pool.acquire(128 * KiB)];
    const medium = [pool.acquire(256 * KiB), pool.acquire(256 * KiB)];
    for (const f of small) pool.release(f);
    for (const f of medium) pool.release(f);
    assert.equal(pool.idleByteCount, 768 * KiB);
    // A 1 MiB fetch read given back: kept, by dropping first the 128 KiB class (used longest ago), then 256 KiB.
    const read = pool.acquire(1024 * KiB);
    pool.release(read);
    assert.equal(pool.idleByteCount, 1024 * KiB);
    assert.equal(pool.stats.dropped, 4);
    assert.equal(pool.acquire(1000 * KiB).buffer, read.buffer, 'the next read reuses it');
    // Released again with a 128 KiB frame idle and touched after it: the 128 KiB one makes room, not the 1 MiB class.
    const frame = pool.acquire(128 * KiB);
    pool.release(frame);
    const another = pool.acquire(1024 * KiB);
    pool.release(read);
    assert.equal(pool.idleByteCount, 1024 * KiB);
    assert.equal(pool.acquire(128 * KiB).buffer === frame.buffer, false, 'the 128 KiB buffer was dropped');
    // Its own class at the bound: the released buffer is dropped, nothing idle is.
    pool.release(another);
    assert.equal(pool.idleByteCount, 1024 * KiB);
    assert.equal(pool.acquire(1024 * KiB).buffer, read.buffer);
  });

  it('with poison, idle memory is overwritten so a view used after release reads garbage', () => {
    const pool = new FramePool(1024 * KiB, true);
    const a = pool.acquire(32 * KiB);
    a.fill(7);
    const stale = a.subarray(100, 200);
    pool.release(a);
    assert.ok(stale.every((b) => b === 0xa5));
  });

  it('size classes waste at most an eighth and are stable', () => {
    for (let size = POOLED_FRAME_BYTES_MIN; size <= POOLED_FRAME_BYTES_MAX; size += 997) {
      const c = sizeClass(size);
      assert.ok(c >= size && c <= size * 1.125, `class ${c} of ${size}`);
      assert.equal(sizeClass(c), c);
    }
  });
});
