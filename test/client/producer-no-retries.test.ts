// A producer with retries=0, as Kafka 3.9's ProducerConfig.postProcessAndValidateIdempotenceConfigs takes it:
// idempotence, on by default, is turned off (the producer asks for no producer id and writes plain batches); asked
// for explicitly it is a ConfigException ("Must set retries to non-zero when using the idempotent producer."), and a
// transactional.id, which needs idempotence, one too. Seen on the wire: a proxy in front of the broker records the
// client id of every request. Before the fix Brook's producer stayed idempotent with retries=0 (InitProducerId
// sent), and built both refused producers.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { startBrokerBehindClientIdProxy } from '../helpers/client-id-proxy.js';

test('retries=0 turns the default idempotence off; with idempotence or a transactional.id it is refused', async (t) => {
  const proxy = await startBrokerBehindClientIdProxy({ 'num.partitions': 1 });
  t.after(() => proxy.stop());

  const producer = new Producer({ bootstrapServers: proxy.bootstrap, clientId: 'no-retries', retries: 0 });
  try {
    const sent = await producer.send({ topic: 'no-retries', value: Buffer.from('one') });
    assert.equal(sent.offset, 0);
  } finally {
    await producer.close();
  }
  assert.ok(proxy.clientIds(ApiKey.PRODUCE).has('no-retries'), 'the record was produced');
  assert.ok(!proxy.clientIds(ApiKey.INIT_PRODUCER_ID).has('no-retries'), 'no producer id asked for');

  assert.throws(
    () => new Producer({ bootstrapServers: proxy.bootstrap, retries: 0, idempotent: true }),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.message === 'Must set retries to non-zero when using the idempotent producer.',
  );
  assert.throws(
    () => new Producer({ bootstrapServers: proxy.bootstrap, retries: 0, transactionalId: 'tx' }),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.message === 'Cannot set a transactional.id without also enabling idempotence.',
  );
});
