// A cluster that does not start says why: two brokers on one ZooKeeper but under different chroots never agree
// on a controller (each runs its own); the error explainFailedStart makes of that names each broker's view
// (the controller it names, the brokers it knows alive), ends with the last lines of each broker's log, and
// keeps each whole log in the directory it names.

import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type BrokerProcess, startBroker } from './broker-process.js';
import { agreedController, controllerOf, waitFor } from './cluster.js';
import { explainFailedStart } from './test-cluster.js';
import { startTestZooKeeper, type TestZooKeeper } from './zookeeper.js';

describe('a cluster that fails to start', () => {
  let zk: TestZooKeeper | undefined;
  const brokers: BrokerProcess[] = [];
  let logDir: string | undefined;
  before(async () => {
    zk = await startTestZooKeeper();
    for (const id of [0, 1]) {
      brokers.push(
        await startBroker({
          overrides: { 'broker.id': id, 'zookeeper.connect': `${zk.connect}/apart-${id}` },
        }),
      );
    }
  });
  after(async () => {
    for (const b of brokers) await b.stop().catch(() => b.kill());
    await zk?.stop();
    if (logDir !== undefined) rmSync(logDir, { recursive: true, force: true });
  });

  it("is explained with each broker's view and log", async () => {
    // Each broker is its own controller once it has run for it.
    for (const b of brokers)
      await waitFor(`broker ${b.brokerId} to be controller`, async () =>
        (await controllerOf(b)) === b.brokerId ? true : undefined,
      );
    const cause = await agreedController(brokers, 1_000).then(
      () => assert.fail('brokers under different chroots agreed on a controller'),
      (e: unknown) => e,
    );
    const error = await explainFailedStart(cause, brokers);
    const message = error.message;
    assert.equal(error.cause, cause);
    assert.match(
      message,
      /^the cluster did not start: timed out waiting for every broker to know the controller/,
    );
    for (const b of brokers) {
      assert.match(
        message,
        new RegExp(
          `--- broker ${b.brokerId} \\(pid ${b.pid}, [^)]*\\): controller ${b.brokerId}, live brokers \\[${b.brokerId}\\]`,
        ),
      );
      const lastLine = b.log().trimEnd().split('\n').at(-1)!;
      assert.ok(lastLine.length > 0, `broker ${b.brokerId} logged nothing`);
      assert.ok(message.includes(lastLine), `the message lacks broker ${b.brokerId}'s last log line`);
    }
    const dir = /--- whole broker logs in (\S+)$/.exec(message)?.[1];
    assert.ok(dir !== undefined, 'the message names no log directory');
    logDir = dir;
    for (const b of brokers) {
      const kept = readFileSync(`${dir}/broker-${b.brokerId}.log`, 'utf8');
      assert.ok(
        kept.length > 0 && b.log().startsWith(kept),
        `broker ${b.brokerId}'s kept log is not its log`,
      );
    }
  });
});
