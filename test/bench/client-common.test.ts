// The client benchmarks count a child client's CPU (kcat) from this process's cutime/cstime once it has exited.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { childrenCpuMicros } from '../../bench/client/common.js';

describe('client benchmark CPU of children', () => {
  it('grows by the CPU of a child that spun for 300 ms of CPU, once it has exited', async () => {
    // The child spins on CPU time, not wall time, so a loaded machine cannot make it use less.
    const script = 'const s = process.cpuUsage(); while (process.cpuUsage(s).user < 300000) {}';
    const before = childrenCpuMicros();
    const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
    const grown = childrenCpuMicros() - before;
    // At least the 300 ms it spun (ticks are 10 ms), and not wildly more than a node start adds.
    assert.ok(grown >= 290_000 && grown < 3_000_000, `children CPU grew by ${grown} us`);
  });
});
