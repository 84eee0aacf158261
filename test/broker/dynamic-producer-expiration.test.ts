// producer.id.expiration.ms changed over the wire on the cluster-default broker resource (dynamic cluster-wide in
// Kafka, KIP-854): an idle idempotent producer that the static default (one day) keeps is forgotten once the new,
// shorter value is in force, on the broker's next expiry check (every 200 ms here).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { WireClient } from '../helpers/wire-client.js';

const TOPIC = 'expiring';

describe('dynamic producer.id.expiration.ms over the wire', () => {
  let broker: BrokerProcess;
  let client: WireClient;

  before(async () => {
    broker = await startBroker({ overrides: { 'producer.id.expiration.check.interval.ms': 200 } });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  async function activeProducers(): Promise<number> {
    const res = await client.call(ApiKey.DESCRIBE_PRODUCERS, 0, {
      topics: [{ name: TOPIC, partitionIndexes: [0] }],
    });
    const p = res.topics[0].partitions[0];
    assert.equal(p.errorCode, ErrorCode.NONE, p.errorMessage);
    return p.activeProducers.length;
  }

  it('forgets an idle producer once a shorter expiration is set on the cluster default', async () => {
    const producer = new Producer({
      bootstrapServers: broker.bootstrap,
      idempotent: true,
      clientId: 'expiry',
    });
    try {
      await waitFor('an idempotent write', async () => {
        await producer.send({ topic: TOPIC, value: Buffer.from('v') });
        return true;
      });
    } finally {
      await producer.close();
    }
    assert.equal(await activeProducers(), 1, 'the producer is known');

    const altered = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: 4,
          resourceName: '',
          configs: [{ name: 'producer.id.expiration.ms', configOperation: 0, value: '1000' }],
        },
      ],
      validateOnly: false,
    });
    assert.equal(altered.responses[0].errorCode, ErrorCode.NONE, altered.responses[0].errorMessage);
    await waitFor(
      'the idle producer forgotten',
      async () => ((await activeProducers()) === 0 ? true : undefined),
      60_000,
    );
  });
});
