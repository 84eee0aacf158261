// The current leader epoch a consumer sends with its Fetch and ListOffsets requests, as Kafka's consumer does: the
// partition's leader epoch from its metadata (AbstractFetch's position.currentLeader.epoch, OffsetFetcher's
// currentLeaderEpoch), so that a broker that is no longer the leader of that epoch answers FENCED_LEADER_EPOCH
// or UNKNOWN_LEADER_EPOCH instead of serving a stale log. Kafka's admin client sends -1 in its ListOffsets, and so
// does Brook's. Against an in-process broker whose interceptor records the requests' currentLeaderEpoch fields.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import type { FetchRequest } from '../../src/protocol/messages/01-fetch.js';
import type { ListOffsetsRequest } from '../../src/protocol/messages/02-list-offsets.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type EpochTopic, startEpochTopic } from '../helpers/epoch-topic.js';
import type { InProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'current-leader-epoch';
const tp = { topic: TOPIC, partition: 0 };

describe('current leader epoch in consumer requests', () => {
  let setup: EpochTopic;
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  let leaderEpoch: number;
  const fetchEpochs: number[] = [];
  const listOffsetsEpochs: number[] = [];

  before(async () => {
    setup = await startEpochTopic(TOPIC, 3);
    ({ broker, bootstrapServers, admin, leaderEpoch } = setup);
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.FETCH) {
        const body = request.body as FetchRequest;
        for (const t of body.topics) for (const p of t.partitions) fetchEpochs.push(p.currentLeaderEpoch);
      }
      if (request.apiKey === ApiKey.LIST_OFFSETS) {
        const body = request.body as ListOffsetsRequest;
        for (const t of body.topics)
          for (const p of t.partitions) listOffsetsEpochs.push(p.currentLeaderEpoch);
      }
      return undefined;
    });
  });
  after(async () => {
    await setup?.stop();
  });

  it('a consumer sends the leader epoch of its metadata in Fetch and ListOffsets', async () => {
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest' });
    try {
      consumer.assign([tp]);
      let seen = 0;
      const deadline = Date.now() + 5000;
      while (seen < 3 && Date.now() < deadline) seen += (await consumer.poll(200)).length;
      assert.equal(seen, 3, 'the records were consumed');
      const [end] = await consumer.endOffsets([tp]);
      assert.equal(end?.offset, 3);
    } finally {
      await consumer.close();
    }
    assert.ok(fetchEpochs.length > 0 && listOffsetsEpochs.length > 0, 'both requests were seen');
    assert.deepEqual(new Set(fetchEpochs), new Set([leaderEpoch]), 'Fetch carries the leader epoch');
    assert.deepEqual(
      new Set(listOffsetsEpochs),
      new Set([leaderEpoch]),
      'ListOffsets carries the leader epoch',
    );
  });

  it("the admin client's ListOffsets sends no leader epoch, as Kafka's", async () => {
    listOffsetsEpochs.length = 0;
    const [latest] = await admin.listOffsets([{ ...tp, spec: 'latest' }]);
    assert.equal(latest?.offset, 3);
    assert.deepEqual(listOffsetsEpochs, [-1]);
  });
});
