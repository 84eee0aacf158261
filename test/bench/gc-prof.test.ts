// `broker --gc-prof`: the GC trace summary, the promoted-sites summary, and a real broker that leaves both files.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startBroker } from '../../bench/broker/broker-process.js';
import { promotedSites, summarizeGcLog } from '../../bench/broker/gc-top.js';
import { withTempDir } from '../../bench/harness/temp-dir.js';

// Lines as Node 20's V8 prints them under --trace-gc --trace-incremental-marking (from a broker's trace).
const trace = [
  '[1:0x1]      438 ms: Scavenge 4.6 (4.7) -> 4.1 (5.7) MB, 1.05 / 0.01 ms  (average mu = 1.000, current mu = 1.000) task; ',
  '[1:0x1]     1318 ms: [IncrementalMarking] Start (task): (size/limit/slack) v8: 10MB / 12MB / 2MB global: 10MB / 13MB / 3MB',
  '[1:0x1]     1395 ms: Mark-Compact 13.1 (27.0) -> 9.1 (27.7) MB, 25.27 / 0.32 ms  (+ 25.6 ms in 4 steps since start of marking, biggest step 25.1 ms, walltime since start of marking 78 ms) (average mu = 1.000, current mu = 1.000) finalize incremental marking via stack guard; GC in old space requested',
  'Brook broker 0 listening on 127.0.0.1:40095 (PLAINTEXT)',
  '[1:0x1]     2164 ms: Scavenge 17.2 (27.0) -> 13.1 (28.2) MB, 7.68 / 0.14 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ',
  '[1:0x1]     5298 ms: [IncrementalMarking] Start (external memory pressure): (size/limit/slack) v8: 18MB / 44MB / 26MB',
  '[1:0x1]    18593 ms: Mark-Compact 28.2 (51.6) -> 16.6 (51.6) MB, 127.04 / 0.29 ms  (average mu = 0.991, current mu = 0.989) sampling profiler; GC in old space requested',
].join('\n');

const frame = (functionName: string, line: number) => ({
  functionName,
  url: 'file:///x.js',
  lineNumber: line,
});

describe('broker --gc-prof', () => {
  it('counts scavenges and mark-compacts, their pauses, and why incremental marking started', () => {
    const summary = summarizeGcLog(trace);
    assert.equal(summary.scavenges, 2);
    assert.equal(summary.markCompacts, 2);
    assert.deepEqual(summary.markCompactPauseMs, [25.27, 127.04]);
    assert.deepEqual(
      [...summary.markingStarts],
      [
        ['task', 1],
        ['external memory pressure', 1],
      ],
    );
  });

  it('ranks allocation sites and stacks by sampled bytes, as shares of all', () => {
    const head = {
      callFrame: frame('(root)', -1),
      selfSize: 0,
      children: [
        {
          callFrame: frame('produce', 9),
          selfSize: 100,
          children: [{ callFrame: frame('appendQueued', 19), selfSize: 300, children: [] }],
        },
        {
          callFrame: frame('fetch', 29),
          selfSize: 0,
          children: [{ callFrame: frame('appendQueued', 19), selfSize: 100, children: [] }],
        },
      ],
    };
    const { totalBytes, sites, stacks } = promotedSites(head, 10);
    assert.equal(totalBytes, 500);
    assert.deepEqual(sites[0], ['appendQueued /x.js:20', 80]);
    assert.deepEqual(sites[1], ['produce /x.js:10', 20]);
    assert.deepEqual(stacks[0], ['appendQueued /x.js:20 < produce /x.js:10 < (root) /x.js:0', 60]);
  });

  it('a broker under --gc-prof writes its GC trace and, after a measured window, the promoted-objects profile', async () => {
    await withTempDir(tmpdir(), 'brook-bench-gc-prof-', async (dir) => {
      const broker = await startBroker({
        dataDir: join(dir, 'logs'),
        gcProfileDir: dir,
        loopProbeFile: join(dir, 'loop-probe.json'),
      });
      try {
        // The first SIGUSR2 starts the sampling, as a cell's first measured window does; the answer shows the
        // broker handled it before it is stopped.
        broker.probeLoop();
        assert.ok(await broker.readLoopProbe(10_000), 'the loop probe answered');
      } finally {
        await broker.stop();
      }
      const log = readFileSync(join(dir, `broker-${broker.pid}.gc.log`), 'utf8');
      assert.match(log, /listening on/);
      const profilePath = join(dir, `broker-${broker.pid}.heapprofile`);
      assert.ok(existsSync(profilePath), 'heap profile written at exit');
      const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as { head: { children: unknown[] } };
      assert.ok(Array.isArray(profile.head.children));
    });
  });
});
