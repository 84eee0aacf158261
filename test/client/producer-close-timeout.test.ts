// Producer.close(timeoutMs) with a negative timeout, against an in-process broker. Kafka's KafkaProducer.close
// (Duration) refuses one (IllegalArgumentException) before closing anything, so the producer stays usable and its
// records are not dropped; Brook refuses it with a RangeError the same way, where it used to close at once,
// failing the records not yet sent.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'producer-close-timeout';

describe('Producer.close(timeoutMs)', () => {
  let broker: InProcessBroker;

  before(async () => {
    broker = await startInProcessBroker({});
  });
  after(async () => {
    await broker?.stop();
  });

  it('refuses a negative timeout and stays open, its records still sent', async () => {
    const producer = new Producer({ bootstrapServers: `127.0.0.1:${broker.port}`, lingerMs: 200 });
    try {
      const sent = producer.send({ topic: TOPIC, value: Buffer.from('kept') });
      await assert.rejects(producer.close(-1), { name: 'RangeError' });
      const { offset } = await sent;
      assert.equal(Number(offset), 0);
    } finally {
      await producer.close();
    }
  });
});
