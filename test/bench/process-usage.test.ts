// Peak RSS and CPU seconds of a child from /proc, and this process's event-loop delay.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { monitorEventLoop } from '../../bench/harness/event-loop-delay.js';
import { parseProcStat, parseProcStatus, watchProcess } from '../../bench/harness/process-usage.js';

describe('process usage', () => {
  it('parses CPU ticks after a command name holding spaces and parentheses', () => {
    const stat = '4242 (node (x) y) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 75 0 0 20 0 11 0 9999 1000 500';
    assert.deepEqual(parseProcStat(stat, 100), { userSeconds: 2.5, systemSeconds: 0.75 });
    assert.equal(parseProcStat('garbage', 100), undefined);
  });

  it('parses VmRSS and VmHWM in kB into bytes', () => {
    const status = 'Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t7\n';
    assert.deepEqual(parseProcStatus(status), {
      rssBytes: 100 * 1024 * 1024,
      peakRssBytes: 200 * 1024 * 1024,
    });
    assert.equal(parseProcStatus('Name:\tkthread\n'), undefined);
  });

  it('sees the peak RSS and CPU seconds of a child that allocates 150 MiB and spins for 300 ms of CPU', async () => {
    // The child spins on CPU time, not wall time, so a loaded machine cannot make it use less. It holds its
    // memory and then waits for stdin to close, so the watch can take its last sample while it still exists.
    const script = `
      const held = Buffer.alloc(150 * 1024 * 1024, 1);
      const start = process.cpuUsage();
      while (process.cpuUsage(start).user < 300000) {}
      process.stdout.write('ready ' + held.length + '\\n');
      process.stdin.on('end', () => process.exit(0)).resume();`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const watch = watchProcess(child.pid!, 20);
      await once(child.stdout, 'data');
      const usage = watch.stop();
      assert.ok(usage.peakRssBytes > 150 * 1024 * 1024, `peak RSS ${usage.peakRssBytes}`);
      assert.ok(usage.cpuSeconds >= 0.28, `CPU seconds ${usage.cpuSeconds}`);
      assert.ok(usage.samples >= 2);
      child.stdin.end();
      await once(child, 'exit');
      // After exit the figures stay as last sampled.
      assert.deepEqual(watch.stop(), usage);
    } finally {
      if (child.exitCode === null) child.kill();
    }
  });

  it('reports an idle loop as (almost) no delay, not the sampling interval', async () => {
    // Node's raw histogram would give a p50 of about 20 ms here (the interval between samples).
    const monitor = monitorEventLoop(20);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const delay = monitor.stop();
    assert.ok(delay.count >= 5, `samples ${delay.count}`);
    assert.ok(delay.p50 < 10, `p50 delay ${delay.p50} ms`);
  });

  it('measures an event-loop stall as delay', async () => {
    const monitor = monitorEventLoop(5);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const until = performance.now() + 80;
    while (performance.now() < until) {
      // Blocks the loop on purpose.
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    const delay = monitor.stop();
    assert.equal(delay.unit, 'ms');
    assert.ok(delay.max >= 60, `max delay ${delay.max} ms`);
    assert.ok(delay.p50 < delay.max);
  });
});
