// The client.id a client sends in its request headers when none is configured, as Kafka's clients name themselves
// (ProducerConfig, ConsumerConfig and KafkaAdminClient): producer-<transactional id or sequence>,
// consumer-<group id>-<group instance id or sequence>, adminclient-<sequence>. Client-id quotas and the group
// tools' CLIENT-ID column see these names. A configured client.id is sent as it is. Against an in-process broker
// whose interceptor records the client ids of the requests it receives.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

describe('default client ids', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  const seen = new Set<string | null>();

  before(async () => {
    broker = await startInProcessBroker();
    bootstrapServers = `127.0.0.1:${broker.port}`;
    broker.interception.set((request) => {
      seen.add(request.header.clientId);
      return undefined;
    });
  });
  after(() => broker?.stop());

  /** The client ids of the requests a client sent while it listed the cluster's topics. */
  async function idsOf(client: Producer | Consumer | Admin): Promise<string[]> {
    seen.clear();
    try {
      await client.cluster.fetchMetadata(null);
    } finally {
      await client.close();
    }
    return [...seen].map(String);
  }

  it("names producers, consumers and admin clients as Kafka's clients do", async () => {
    const [producer] = await idsOf(new Producer({ bootstrapServers }));
    assert.match(producer!, /^producer-\d+$/);
    assert.deepEqual(await idsOf(new Producer({ bootstrapServers, transactionalId: 'tx-a' })), [
      'producer-tx-a',
    ]);

    const [consumer] = await idsOf(new Consumer({ bootstrapServers, groupId: 'g1' }));
    assert.match(consumer!, /^consumer-g1-\d+$/);
    assert.deepEqual(await idsOf(new Consumer({ bootstrapServers, groupId: 'g1', groupInstanceId: 'i-7' })), [
      'consumer-g1-i-7',
    ]);
    const [groupless] = await idsOf(new Consumer({ bootstrapServers }));
    assert.match(groupless!, /^consumer-null-\d+$/);

    const [admin] = await idsOf(new Admin({ bootstrapServers }));
    assert.match(admin!, /^adminclient-\d+$/);
  });

  it('sends a configured client.id as it is', async () => {
    assert.deepEqual(await idsOf(new Consumer({ bootstrapServers, clientId: 'mine' })), ['mine']);
    assert.deepEqual(await idsOf(new Admin({ bootstrapServers, clientId: 'ops' })), ['ops']);
  });
});
