// quota.window.size.seconds through the wire: the rate a quota is held to is measured over quota.window.num
// samples of that size (Kafka's ClientQuotaManager), never over less than quota.window.num - 1 whole windows. With
// two samples of 5 s, a first Produce of about 20 kB under producer_byte_rate=5000 is within the quota (20 kB over
// 5 s is 4 kB/s); with the default 1 s samples the same request would be answered with about 3 s of throttle
// time (20 kB over 1 s). More requests then go over the quota and are throttled.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const PAYLOAD = buildBatch(Array.from({ length: 20 }, () => ({ value: 'x'.repeat(1000) })));
const QUOTA = 5000;

describe('quota.window.size.seconds', () => {
  let broker: BrokerProcess;
  let admin: Admin;
  let setup: WireClient;

  before(async () => {
    broker = await startBroker({ overrides: { 'quota.window.num': 2, 'quota.window.size.seconds': 5 } });
    admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'window-admin' });
    setup = await WireClient.connect(broker.host, broker.port);
    await createTopic(setup, 'window-topic', { numPartitions: 1, replicationFactor: 1 });
  });
  after(async () => {
    setup?.close();
    await admin?.close();
    await broker?.stop();
  });

  it('measures the rate over samples of that size', async () => {
    assert.ok(PAYLOAD.length > QUOTA * 4 && PAYLOAD.length < QUOTA * 5, `a batch of ${PAYLOAD.length} bytes`);
    const set = await admin.alterClientQuotas([
      { entity: { clientId: 'windowed' }, ops: [{ key: 'producer_byte_rate', value: QUOTA }] },
      { entity: { clientId: 'probe' }, ops: [{ key: 'producer_byte_rate', value: QUOTA }] },
    ]);
    assert.deepEqual(
      set.map((r) => r.error),
      [null, null],
    );
    const produce = async (client: WireClient) => {
      const r = await client.call(ApiKey.PRODUCE, 9, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 5000,
        topicData: [{ name: 'window-topic', partitionData: [{ index: 0, records: PAYLOAD }] }],
      });
      assert.equal(r.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
      return r.throttleTimeMs as number;
    };
    // The quotas reach the request path through the broker's change notifications, in order: once the second
    // one throttles, the first is in force too. Its own sensor is untouched until the measurement below.
    const probe = await WireClient.connect(broker.host, broker.port, 'probe');
    const windowed = await WireClient.connect(broker.host, broker.port, 'windowed');
    try {
      let probed = 0;
      const deadline = Date.now() + 60_000;
      while (probed === 0 && Date.now() < deadline) probed = await produce(probe);
      assert.ok(probed > 0, 'the quotas are in force');
      const first = await produce(windowed);
      assert.equal(first, 0, '20 kB over two samples of 5 s is under 5000 B/s');
      let throttled = 0;
      for (let i = 0; i < 20 && throttled === 0; i++) throttled = await produce(windowed);
      assert.ok(throttled > 0, 'more requests go over the quota');
      // Kafka's bound on one answer: the excess over the quota, spread back over the measured window.
      assert.ok(throttled <= 30_000, `throttle_time_ms ${throttled}`);
    } finally {
      probe.close();
      windowed.close();
    }
  });
});
