// The client settings of a distributed worker's group member, as Kafka 3.9's WorkerGroupMember builds its network
// client from the worker config: request.timeout.ms (DistributedConfig's default 40 s), retry.backoff.ms and
// retry.backoff.max.ms, reconnect.backoff.ms and reconnect.backoff.max.ms, metadata.max.age.ms and
// socket.connection.setup.timeout.ms. Seen on the wire: a proxy in front of the broker swallows the member's
// Heartbeat and everything after it on that connection, as a broker that stopped answering; with the worker's
// request.timeout.ms=3000 the member gives the request up after 3 s, drops the connection and looks for its
// coordinator again (FindCoordinator), as Kafka's ConsumerNetworkClient and AbstractCoordinator do.
//
// Before the fix Brook's member took only the worker's security keys, waited the client default of 30 s, and sent
// no FindCoordinator within the test's 15 s.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startBrokerBehindClientIdProxy } from '../helpers/client-id-proxy.js';
import { distributedWorkerProps } from '../helpers/connect-worker.js';
import { waitUntil } from '../helpers/wait.js';

const REQUEST_TIMEOUT_MS = 3_000;

test("a worker's request.timeout.ms times out its group member's Heartbeat", async (t) => {
  const proxy = await startBrokerBehindClientIdProxy({
    'num.partitions': 1,
    'group.initial.rebalance.delay.ms': 0,
  });
  const props = distributedWorkerProps(proxy.bootstrap, 'member-settings', {
    'client.id': 'member-rt',
    'request.timeout.ms': String(REQUEST_TIMEOUT_MS),
    'session.timeout.ms': '30000',
  });
  const worker = await startDistributed(props, () => {}).catch(async (err) => {
    await proxy.stop();
    throw err;
  });
  t.after(async () => {
    await worker.stop();
    await proxy.stop();
  });

  const swallowedAtMs = await proxy.blackHole(ApiKey.HEARTBEAT, 'member-rt');
  const lookedUpAgain = () =>
    proxy.requestTimes(ApiKey.FIND_COORDINATOR, 'member-rt').find((at) => at > swallowedAtMs);
  await waitUntil(
    () => lookedUpAgain() !== undefined,
    15_000,
    () => `no FindCoordinator of member-rt after its Heartbeat was swallowed at ${swallowedAtMs}`,
  );
  const waitedMs = lookedUpAgain()! - swallowedAtMs;
  assert.ok(
    waitedMs >= REQUEST_TIMEOUT_MS - 100 && waitedMs < REQUEST_TIMEOUT_MS + 3_000,
    `the member looked for its coordinator ${waitedMs} ms after the lost Heartbeat`,
  );
});
