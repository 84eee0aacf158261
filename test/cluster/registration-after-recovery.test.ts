// A broker registers in /brokers/ids only after its logs are loaded (recovered), as Kafka's does: a registered
// broker may be elected leader at once, and must not lead from a log still being recovered. Seen through real
// ZooKeeper: a watch set before the broker starts fires if the registration is ever created. A broker whose log
// directory cannot be loaded (its meta.properties names another cluster) must fail to start without that watch
// firing; a broker with a loadable directory registers, which shows the watch works.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrokerId } from '../../src/common/ids.js';
import type { CoordinationStore, WatchEvent } from '../../src/controller/store/store.js';
import { connectZooKeeper } from '../../src/controller/store/zookeeper-store.js';
import { brokerPath } from '../../src/controller/zk-layout/index.js';
import { startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { sleep } from '../helpers/wait.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

describe('broker registration waits for the logs to load', () => {
  let zk: TestZooKeeper | undefined;
  let store: CoordinationStore | undefined;
  const dirs: string[] = [];
  before(async () => {
    zk = await startTestZooKeeper();
    const opened = await connectZooKeeper({ connect: zk.connect, sessionTimeoutMs: 6000 });
    assert.ok(opened.ok, 'connected to ZooKeeper');
    store = opened.value;
  });
  after(async () => {
    await store?.close();
    await zk?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Watches /brokers/ids/<id> for its creation; answers the events seen so far. */
  async function watchRegistration(id: number): Promise<WatchEvent[]> {
    const events: WatchEvent[] = [];
    const exists = await store!.exists(brokerPath(id as BrokerId), (e) => events.push(e));
    assert.ok(exists.ok && exists.value === null, `broker ${id} is not registered yet`);
    return events;
  }

  it('never registers a broker whose logs fail to load', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-unloadable-'));
    dirs.push(dir);
    writeFileSync(
      join(dir, 'meta.properties'),
      'version=1\nbroker.id=7\ncluster.id=AnotherClusterAAAAAAAAA\n',
    );
    const events = await watchRegistration(7);
    await assert.rejects(
      startBroker({
        dataDir: dir,
        keepDataDir: true,
        overrides: { 'broker.id': 7, 'zookeeper.connect': zk!.connect },
      }),
      // A log directory of another cluster is a configuration error at startup: one line and exit code 2.
      /exited with 2 before listening:[\s\S]*meta\.properties: belongs to broker 7 of cluster AnotherCluster/,
    );
    // A registration created and removed again (when the failed broker closed its session) would have fired the
    // watch by now: ZooKeeper sends the event before it answers the creating session.
    await sleep(500);
    assert.deepEqual(events, [], 'no registration was ever created');
  });

  it('registers a broker whose logs load', { timeout: 60_000 }, async () => {
    const events = await watchRegistration(8);
    const broker = await startBroker({ overrides: { 'broker.id': 8, 'zookeeper.connect': zk!.connect } });
    try {
      await waitFor('the registration watch', async () => (events.length > 0 ? true : undefined));
      assert.equal(events[0]!.type, 'created');
    } finally {
      await broker.stop();
    }
  });
});
