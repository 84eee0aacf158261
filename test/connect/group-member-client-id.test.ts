// The client id of a distributed worker's group member (JoinGroup, SyncGroup, Heartbeat), as Kafka 3.9's
// DistributedHerder names it for WorkerGroupMember: the worker's `client.id`, else `connect-<worker id>`, the
// worker id being the advertised REST host and port. Seen on the wire: a proxy in front of the broker records
// the client id of every request. Before the fix, Brook's member was `connect-<group.id>`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startDistributed } from '../../src/connect/runtime/distributed/distributed.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startBrokerBehindClientIdProxy } from '../helpers/client-id-proxy.js';
import { distributedWorkerProps } from '../helpers/connect-worker.js';

test('the group member of a worker without client.id joins as connect-<worker id>; with one, as that id', async (t) => {
  const proxy = await startBrokerBehindClientIdProxy({
    'num.partitions': 1,
    'group.initial.rebalance.delay.ms': 0,
  });
  t.after(() => proxy.stop());

  const plain = await startDistributed(distributedWorkerProps(proxy.bootstrap, 'member-id'), () => {});
  try {
    const joined = [...proxy.clientIds(ApiKey.JOIN_GROUP)];
    assert.deepEqual(joined, [`connect-${plain.workerId}`], 'the JoinGroup client ids');
    assert.match(plain.workerId, /^127\.0\.0\.1:\d+$/);
  } finally {
    await plain.stop();
  }

  const named = await startDistributed(
    distributedWorkerProps(proxy.bootstrap, 'member-named', { 'client.id': 'w7' }),
    () => {},
  );
  try {
    assert.ok(proxy.clientIds(ApiKey.JOIN_GROUP).has('w7'), [...proxy.clientIds(ApiKey.JOIN_GROUP)].join());
    assert.ok(proxy.clientIds(ApiKey.HEARTBEAT).size > 0 || proxy.clientIds(ApiKey.SYNC_GROUP).has('w7'));
  } finally {
    await named.stop();
  }
});
