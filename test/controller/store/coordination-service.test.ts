import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { coordinationServiceFor } from '../../../src/controller/store/coordination-service.js';
import { withZooKeeper } from '../../helpers/zookeeper.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

it('without zookeeper.connect, keeps the store in __brook_metadata under the first log dir across restarts', async () => {
  const root = mkdtempSync(join(tmpdir(), 'brook-service-'));
  dirs.push(root);
  const logDirs = [join(root, 'logs-a'), join(root, 'logs-b')];
  const first = coordinationServiceFor({ zookeeperConnect: null, logDirs });
  assert.match(first.description, /^in-process .*logs-a\/__brook_metadata$/);
  const session = await first.openSession();
  assert.ok(session.ok);
  assert.equal(session.value.sessionTimeoutMs, 18_000);
  assert.ok((await session.value.create('/cluster', new Uint8Array())).ok);
  await session.value.close();
  await first.close();
  assert.ok(existsSync(join(root, 'logs-a', '__brook_metadata', 'snapshot.json')));
  assert.equal(existsSync(join(root, 'logs-b')), false);

  const second = coordinationServiceFor({ zookeeperConnect: '', logDirs });
  const again = await second.openSession();
  assert.ok(again.ok);
  const stat = await again.value.exists('/cluster');
  assert.ok(stat.ok && stat.value !== null);
  await second.close();
});

it('with zookeeper.connect, opens sessions on that ensemble, a new one after each close', async () => {
  await withZooKeeper(async (zk) => {
    const service = coordinationServiceFor({
      zookeeperConnect: zk.connect,
      logDirs: [],
      sessionTimeoutMs: 6_000,
      connectionTimeoutMs: 10_000,
    });
    assert.equal(service.description, `zookeeper ${zk.connect}`);
    const one = await service.openSession();
    const two = await service.openSession();
    assert.ok(one.ok && two.ok);
    assert.notEqual(one.value.sessionId, two.value.sessionId);
    assert.equal(one.value.sessionTimeoutMs, 6_000);
    await one.value.close();
    await two.value.close();
    await service.close();
  });
});
