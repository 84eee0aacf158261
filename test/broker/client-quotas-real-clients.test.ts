// Real clients under a producer_byte_rate quota: kcat (librdkafka) and kafkajs are throttled (throttle_time_ms and a
// muted connection), back off and deliver everything, taking about as long as the quota allows, while the same
// load from an unthrottled client id finishes at once. The broker runs quota.window.num=2 (windows of 1 s).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { Admin } from '../../src/client/admin.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';

const { Kafka, logLevel } = kafkajs;
/** 300 messages of 1000 bytes: 300 kB, six seconds' worth at 50 kB/s. */
const MESSAGES = 300;
const RATE = 50_000;
const LINE = 'q'.repeat(1000);

describe('real clients under client quotas', () => {
  let broker: BrokerProcess;
  let admin: Admin;

  before(async () => {
    broker = await startBroker({ overrides: { 'quota.window.num': 2, 'num.partitions': 1 } });
    admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'quota-admin' });
    await admin.createTopics([{ topic: 'kcat-quota' }, { topic: 'kafkajs-quota' }]);
    const results = await admin.alterClientQuotas([
      { entity: { clientId: 'kcat-slow' }, ops: [{ key: 'producer_byte_rate', value: RATE }] },
      { entity: { clientId: 'kafkajs-slow' }, ops: [{ key: 'producer_byte_rate', value: RATE }] },
    ]);
    assert.deepEqual(
      results.map((r) => r.error),
      [null, null],
    );
  });
  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  async function endOffset(topic: string): Promise<number> {
    const [r] = await admin.listOffsets([{ topic, partition: 0, spec: 'latest' }]);
    return Number(r!.offset);
  }

  async function kcatProduce(clientId: string): Promise<number> {
    const startedAt = performance.now();
    const r = await run(
      'kcat',
      [
        '-b',
        broker.bootstrap,
        '-P',
        '-t',
        'kcat-quota',
        '-X',
        `client.id=${clientId}`,
        '-X',
        'linger.ms=0',
        '-X',
        'batch.num.messages=10',
      ],
      { input: `${Array.from({ length: MESSAGES }, () => LINE).join('\n')}\n`, timeoutMs: 60_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    return (performance.now() - startedAt) / 1000;
  }

  it('kcat (librdkafka) is held to producer_byte_rate and delivers everything; another client id is not', async () => {
    const slowSeconds = await kcatProduce('kcat-slow');
    assert.equal(await endOffset('kcat-quota'), MESSAGES, 'every message delivered');
    // 300 kB at 50 kB/s with about a second's worth free: well over 3 s.
    assert.ok(slowSeconds >= 3, `throttled kcat took ${slowSeconds.toFixed(2)} s`);
    const fastSeconds = await kcatProduce('kcat-fast');
    assert.equal(await endOffset('kcat-quota'), 2 * MESSAGES);
    assert.ok(
      fastSeconds < slowSeconds / 2,
      `unthrottled ${fastSeconds.toFixed(2)} s, throttled ${slowSeconds.toFixed(2)} s`,
    );
  });

  it('kcat (librdkafka) as a consumer is held to consumer_byte_rate and reads everything', async () => {
    // Runs after the kcat producer test, which left 2 x 300 messages of 1000 bytes in kcat-quota.
    const total = await endOffset('kcat-quota');
    assert.ok(total >= MESSAGES);
    await admin.alterClientQuotas([
      { entity: { clientId: 'kcat-reader' }, ops: [{ key: 'consumer_byte_rate', value: 2 * RATE }] },
    ]);
    const startedAt = performance.now();
    const r = await run(
      'kcat',
      [
        '-b',
        broker.bootstrap,
        '-C',
        '-t',
        'kcat-quota',
        '-o',
        'beginning',
        '-e',
        '-X',
        'client.id=kcat-reader',
      ],
      { timeoutMs: 60_000 },
    );
    const seconds = (performance.now() - startedAt) / 1000;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.split('\n').filter((l) => l === LINE).length, total, 'every message read');
    // 600 kB at 100 kB/s, about a second's worth free: several seconds.
    assert.ok(seconds >= 3, `throttled kcat consumer took ${seconds.toFixed(2)} s`);
  });

  it('kafkajs backs off and delivers everything at the quota', async () => {
    const kafka = new Kafka({
      clientId: 'kafkajs-slow',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
    });
    const producer = kafka.producer();
    await producer.connect();
    try {
      const startedAt = performance.now();
      for (let i = 0; i < MESSAGES / 10; i++) {
        await producer.send({
          topic: 'kafkajs-quota',
          messages: Array.from({ length: 10 }, () => ({ value: LINE })),
        });
      }
      const seconds = (performance.now() - startedAt) / 1000;
      assert.equal(await endOffset('kafkajs-quota'), MESSAGES);
      assert.ok(seconds >= 3, `throttled kafkajs took ${seconds.toFixed(2)} s`);
    } finally {
      await producer.disconnect();
    }
  });
});
