// acks=all refused before the append with NOT_ENOUGH_REPLICAS when a partition's ISR is smaller than
// min.insync.replicas, the topic's own or the cluster default changed at runtime (IncrementalAlterConfigs on the
// '' broker resource, no restart); acks=1 is taken meanwhile. The partitions have two replicas, one of them on a
// stopped broker (test/helpers/short-isr-cluster.ts): on one replica the minimum is capped at 1, as in Kafka 3.7+
// (KAFKA-15583), and acks=all is taken (test/broker/topic-config-effects.test.ts).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { CLUSTER_DEFAULT, withDynamicConfigs } from '../helpers/dynamic-configs.js';
import { type ShortIsrCluster, startShortIsrCluster } from '../helpers/short-isr-cluster.js';
import { produceBatch, WireClient } from '../helpers/wire-client.js';

describe('acks=all with the ISR below min.insync.replicas', () => {
  let cluster: ShortIsrCluster | undefined;
  let client: WireClient | undefined;

  before(async () => {
    cluster = await startShortIsrCluster({ 'needs-two': { 'min.insync.replicas': '2' }, durable: {} });
    client = await WireClient.connect(cluster.leader.host, cluster.leader.port);
  });
  after(async () => {
    client?.close();
    await cluster?.stop();
  });

  const produce = (topic: string, acks: number) =>
    produceBatch(client!, topic, buildBatch([{ value: 'x' }]), acks);

  it('refuses acks=all with NOT_ENOUGH_REPLICAS on a topic whose min.insync.replicas the ISR lacks', async () => {
    const refused = await produce('needs-two', -1);
    // Kafka's ReplicaManager answers the NotEnoughReplicasException of appendRecordsToLeader by its code alone
    // (LogAppendResult.errorMessage is null: no custom message).
    assert.deepEqual([refused.errorCode, refused.errorMessage], [ErrorCode.NOT_ENOUGH_REPLICAS, null]);
    assert.equal((await produce('needs-two', 1)).errorCode, ErrorCode.NONE, 'acks=1 does not need the ISR');
  });

  it('min.insync.replicas on the cluster default: acks=all is refused while it is set', async () => {
    assert.equal((await produce('durable', -1)).errorCode, ErrorCode.NONE);
    await withDynamicConfigs(client!, CLUSTER_DEFAULT, { 'min.insync.replicas': '2' }, async () => {
      assert.equal((await produce('durable', -1)).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
      assert.equal((await produce('durable', 1)).errorCode, ErrorCode.NONE, 'acks=1 needs no ISR');
    });
    assert.equal((await produce('durable', -1)).errorCode, ErrorCode.NONE, 'accepted again');
  });
});
