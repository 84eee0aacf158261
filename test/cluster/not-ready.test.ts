// A broker restarted before ZooKeeper expired its previous session waits for the old registration to go, with its
// listener already bound: the controller's requests that reach it then (meant for its previous run) are answered
// COORDINATOR_LOAD_IN_PROGRESS (retriable: before registering it cannot tell them from this run's) on a connection
// that stays open, not closed as malformed requests (broker/not-ready.ts).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { WireClient } from '../helpers/wire-client.js';
import { freePort, startTestZooKeeper } from '../helpers/zookeeper.js';

test('controller requests that reach a broker still starting are answered, not closed as malformed', async () => {
  const zk = await startTestZooKeeper();
  const dataDir = mkdtempSync(join(tmpdir(), 'brook-not-ready-'));
  const started: Promise<BrokerProcess>[] = [];
  after(async () => {
    for (const b of await Promise.allSettled(started)) if (b.status === 'fulfilled') await b.value.kill();
    await zk.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const port = await freePort();
  const options = {
    port,
    dataDir,
    keepDataDir: true,
    overrides: { 'zookeeper.connect': zk.connect, 'zookeeper.session.timeout.ms': 4000 },
  };
  started.push(startBroker(options));
  const first = await started[0]!;
  await first.kill();
  // Its registration stays until ZooKeeper expires the session: the new process waits for that, listening.
  started.push(startBroker(options));
  let serving = false;
  void started[1]!.then(() => {
    serving = true;
  });
  const client = await waitFor('the restarted broker to listen', () => WireClient.connect('127.0.0.1', port));
  try {
    const metadata = await client.call(ApiKey.UPDATE_METADATA, 8, {
      controllerId: 0,
      isKRaftController: false,
      type: 0,
      controllerEpoch: 1,
      brokerEpoch: 1n,
      ungroupedPartitionStates: [],
      topicStates: [],
      liveBrokers: [],
    });
    // Not registered yet: the broker cannot tell an earlier run's request from this run's, so it asks for a retry.
    assert.equal(metadata.errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    const leaderAndIsr = await client.call(ApiKey.LEADER_AND_ISR, 7, {
      controllerId: 0,
      isKRaftController: false,
      controllerEpoch: 1,
      brokerEpoch: 1n,
      type: 0,
      ungroupedPartitionStates: [],
      topicStates: [],
      liveLeaders: [],
    });
    assert.equal(
      leaderAndIsr.errorCode,
      ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
      'answered on the same connection',
    );
    assert.equal(serving, false, 'both were answered before the broker served');
  } finally {
    client.close();
  }
  const second = await started[1]!;
  assert.doesNotMatch(second.log(), /malformed/);
});
