// RequestQueueTimeMs of a request a connection held undispatched (Connection.heldClusterSized: a second Fetch
// pipelined behind a long poll on the same connection waits until the first one's response is written). Kafka
// mutes a channel from a request until its response is sent, so it does not read the next request until then;
// its RequestQueueTimeMs and TotalTimeMs start when the request is read (RequestChannel.Request's start time).
// Brook holds the frame where Kafka leaves it unread, so the held time is counted in neither: the request counts
// as read when it is let through. Two long-poll Fetches pipelined on one connection, each waiting maxWaitMs on an
// empty partition, then show about no queue time and about 2 * maxWaitMs of total time between them.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { createTopic, fetchBody, WireClient } from '../helpers/wire-client.js';
import { scrape, startMeteredBroker } from './scrape.js';

const TOPIC = 'held-fetch';
const MAX_WAIT_MS = 1000;
const METRIC = 'kafka_network_requestmetrics';

describe('queue time of a held cluster-sized request', () => {
  let broker: BrokerProcess;
  let port: number;
  let client: WireClient;

  before(async () => {
    ({ broker, metricsPort: port } = await startMeteredBroker({}));
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 1 });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('does not count the time a pipelined Fetch was held behind a long poll', async () => {
    const sums = async (): Promise<{ queue: number; total: number; count: number }> => {
      const s = await scrape(port);
      const labels = { request: 'Fetch' };
      return {
        queue: s.get(`${METRIC}_requestqueuetimems_sum`, labels) ?? 0,
        total: s.get(`${METRIC}_totaltimems_sum`, labels) ?? 0,
        count: s.get(`${METRIC}_totaltimems_count`, labels) ?? 0,
      };
    };
    const before = await sums();
    client.send(ApiKey.FETCH, 12, fetchBody(TOPIC, 0, 0, MAX_WAIT_MS));
    client.send(ApiKey.FETCH, 12, fetchBody(TOPIC, 0, 0, MAX_WAIT_MS));
    for (let i = 0; i < 2; i++) assert.equal((await client.receive(10_000)).errorCode, ErrorCode.NONE);
    let now = await sums();
    for (let i = 0; i < 20 && now.count < before.count + 2; i++) now = await sums();
    assert.equal(now.count - before.count, 2, 'both fetches were measured');
    const queue = now.queue - before.queue;
    const total = now.total - before.total;
    assert.ok(queue < 300, `queue time ${queue} ms for two fetches, one held for ${MAX_WAIT_MS} ms`);
    assert.ok(total < 2 * MAX_WAIT_MS + 500, `total time ${total} ms for two fetches of ${MAX_WAIT_MS} ms`);
  });
});
