// `brook zookeeper start|status|stop` against Debian's ZooKeeper, in a temporary data directory.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { runZookeeperCommand } from '../../../src/cli/zookeeper.js';
import { runningPid, stopLocalZooKeeper } from '../../../src/controller/store/local-zookeeper.js';
import { connectZooKeeper } from '../../../src/controller/store/zookeeper-store.js';
import { freePort } from '../../helpers/zookeeper.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // The server is this test's child: after it exits it is a zombie until Node reaps it.
  try {
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

it('starts a ZooKeeper that serves clients, reports it, and stops it by its PID', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-zk-cli-'));
  const dataDir = join(dir, 'zookeeper');
  try {
    const port = await freePort();
    assert.equal(await runZookeeperCommand(['start', '--port', String(port), '--data-dir', dataDir]), 0);
    const pid = runningPid(dataDir);
    assert.ok(pid !== null && alive(pid));
    assert.equal(await runZookeeperCommand(['start', '--port', String(port), '--data-dir', dataDir]), 1);
    assert.equal(await runZookeeperCommand(['status', '--data-dir', dataDir]), 0);
    const session = await connectZooKeeper({ connect: `127.0.0.1:${port}`, connectionTimeoutMs: 5_000 });
    assert.ok(session.ok);
    assert.ok((await session.value.create('/cluster', new Uint8Array())).ok);
    await session.value.close();
    assert.equal(await runZookeeperCommand(['stop', '--data-dir', dataDir]), 0);
    assert.equal(alive(pid), false);
    assert.equal(existsSync(join(dataDir, 'zookeeper.pid')), false);
    assert.equal(await runZookeeperCommand(['status', '--data-dir', dataDir]), 3);
  } finally {
    await stopLocalZooKeeper(dataDir);
    rmSync(dir, { recursive: true, force: true });
  }
});

it('refuses bad arguments', async () => {
  assert.equal(await runZookeeperCommand([]), 1);
  assert.equal(await runZookeeperCommand(['start', '--port', 'x']), 1);
  assert.equal(await runZookeeperCommand(['restart']), 1);
});
