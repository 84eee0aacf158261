// AtomicFile's background replacements: many files written in one turn hold at most BACKGROUND_WRITES_MAX
// descriptors at once (counted in /proc/self/fd while they run), and every file still ends with its last content.
// A write superseded by a synchronous one while it waits for a slot never lands.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AtomicFile, BACKGROUND_WRITES_MAX, backgroundWriteSlots } from '../../src/storage/atomic-file.js';

const openDescriptors = (): number => readdirSync('/proc/self/fd').length;

describe('AtomicFile background writes', () => {
  it('a burst over many files holds a bounded number of descriptors and lands every last content', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-atomic-'));
    try {
      const files = Array.from(
        { length: 400 },
        (_, i) => new AtomicFile(join(dir, `f${i}`), (e) => assert.fail(e)),
      );
      const baseline = openDescriptors();
      for (const [i, f] of files.entries()) {
        f.write(`first ${i}`);
        f.write(`last ${i}`);
      }
      let peak = 0;
      let peakRunning = 0;
      let sawWaiting = false;
      const done = Promise.all(files.map((f) => f.whenWritten()));
      let finished = false;
      const end = (): void => {
        finished = true;
      };
      done.then(end, end);
      while (!finished) {
        peak = Math.max(peak, openDescriptors() - baseline);
        const slots = backgroundWriteSlots();
        peakRunning = Math.max(peakRunning, slots.running);
        sawWaiting ||= slots.waiting > 0;
        await new Promise((r) => setImmediate(r));
      }
      await done;
      // One tmp or directory descriptor per running write, plus a few of the thread pool's own in passing.
      assert.ok(BACKGROUND_WRITES_MAX <= 32);
      assert.ok(peak <= 32 + 8, `${peak} descriptors open at once for 400 files`);
      assert.ok(peakRunning <= BACKGROUND_WRITES_MAX, `${peakRunning} writes ran at once`);
      assert.ok(sawWaiting, 'the burst was larger than the bound, so some writes waited');
      for (const [i] of files.entries()) assert.equal(readFileSync(join(dir, `f${i}`), 'utf8'), `last ${i}`);
      assert.deepEqual(
        readdirSync(dir).filter((n) => n.endsWith('.tmp')),
        [],
        'no temporary file left',
      );
      assert.deepEqual(backgroundWriteSlots(), { running: 0, waiting: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a write superseded by a synchronous one while waiting for a slot never lands', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-atomic-'));
    try {
      const fillers = Array.from({ length: BACKGROUND_WRITES_MAX * 2 }, (_, i) => {
        const f = new AtomicFile(join(dir, `filler${i}`), (e) => assert.fail(e));
        f.write('x');
        return f;
      });
      const target = new AtomicFile(join(dir, 'target'), (e) => assert.fail(e));
      target.write('background');
      // Let the fillers take every slot, so that the target's write waits for one.
      await new Promise((r) => setImmediate(r));
      assert.ok(backgroundWriteSlots().waiting > 0, 'the target waits for a slot');
      target.writeSync('synchronous');
      await Promise.all([...fillers, target].map((f) => f.whenWritten()));
      assert.equal(readFileSync(join(dir, 'target'), 'utf8'), 'synchronous');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
