// Offset commits per second through a real broker: one connection, commits one after another (each written to
// __consumer_offsets and acknowledged once under the high watermark), then pipelined 64 at a time. Reported as
// diagnostics; the assertions check that every commit succeeded and the last one is what OffsetFetch returns.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { WireClient } from '../helpers/wire-client.js';

function commit(offset: number) {
  return {
    groupId: 'rate',
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [
      {
        name: 't',
        partitions: [0, 1, 2, 3].map((partitionIndex) => ({
          partitionIndex,
          committedOffset: BigInt(offset),
          committedLeaderEpoch: -1,
          commitTimestamp: -1n,
          committedMetadata: '',
        })),
      },
    ],
  };
}

describe('offset commit rate', () => {
  let broker: BrokerProcess;
  let client: WireClient;
  before(async () => {
    broker = await startBroker();
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('commits sequentially and pipelined, every one acknowledged', async (t) => {
    // As clients do, FindCoordinator first: it creates __consumer_offsets.
    await client.call(ApiKey.FIND_COORDINATOR, 4, { key: '', keyType: 0, coordinatorKeys: ['rate'] });
    for (let i = 0; ; i++) {
      const r = await client.call(ApiKey.OFFSET_COMMIT, 8, commit(0));
      if (r.topics[0].partitions[0].errorCode === 0) break;
      assert.ok(i < 100, `coordinator never ready: ${r.topics[0].partitions[0].errorCode}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    const count = 2000;
    let started = performance.now();
    for (let i = 1; i <= count; i++) {
      const r = await client.call(ApiKey.OFFSET_COMMIT, 8, commit(i));
      assert.equal(r.topics[0].partitions[0].errorCode, 0);
    }
    t.diagnostic(
      `sequential: ${Math.round((count / (performance.now() - started)) * 1000)} commits/s (4 partitions each)`,
    );
    started = performance.now();
    let last = count;
    for (let i = 0; i < count; i += 64) {
      for (let k = 0; k < 64; k++) client.send(ApiKey.OFFSET_COMMIT, 8, commit(++last));
      for (let k = 0; k < 64; k++)
        assert.equal((await client.receive()).topics[0].partitions[0].errorCode, 0);
    }
    t.diagnostic(`pipelined by 64: ${Math.round((count / (performance.now() - started)) * 1000)} commits/s`);
    const fetched = await client.call(ApiKey.OFFSET_FETCH, 8, {
      groupId: '',
      topics: [],
      groups: [
        { groupId: 'rate', memberId: null, memberEpoch: -1, topics: [{ name: 't', partitionIndexes: [3] }] },
      ],
      requireStable: true,
    });
    assert.equal(fetched.groups[0].topics[0].partitions[0].committedOffset, BigInt(last));
  });
});
