// Consumer.close({ timeoutMs }) against a real broker process that stops answering (frozen with SIGSTOP: its
// sockets stay open, so nothing is refused and every request waits). As Kafka's KafkaConsumer.close(Duration)
// (ClassicKafkaConsumer: the coordinator's close, then the fetch sessions' close, on one timer), every step of the
// close (the auto-commit, LeaveGroup, the fetch sessions' close, the connections) is bounded by what is left of
// the timeout, so close returns within it instead of after the request timeout of each step. A negative timeout is
// refused, as Kafka's IllegalArgumentException.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';

const TOPIC = 'close-timeout';
const CLOSE_TIMEOUT_MS = 1000;
/** Scheduling slack on a shared machine. */
const SLACK_MS = 1500;

describe('Consumer.close({ timeoutMs })', () => {
  let broker: BrokerProcess;
  let frozen = false;

  before(async () => {
    broker = await startBroker({
      overrides: { 'offsets.topic.num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 },
    });
  });
  after(async () => {
    if (frozen) process.kill(broker.pid, 'SIGCONT');
    await broker?.stop();
  });

  it('refuses a negative timeout', async () => {
    const consumer = new Consumer({ bootstrapServers: broker.bootstrap, groupId: 'negative' });
    await assert.rejects(consumer.close({ timeoutMs: -1 }), RangeError);
    await consumer.close({ timeoutMs: 0 });
  });

  it('returns within the timeout when the broker stopped answering', async () => {
    const producer = new Producer({ bootstrapServers: broker.bootstrap });
    await producer.send({ topic: TOPIC, value: Buffer.from('v') });
    await producer.close();
    const consumer = new Consumer({
      bootstrapServers: broker.bootstrap,
      groupId: 'close-timeout-group',
      autoOffsetReset: 'earliest',
      enableAutoCommit: true,
    });
    let closing: Promise<void> | undefined;
    try {
      consumer.subscribe([TOPIC]);
      const deadline = Date.now() + 20_000;
      let read = 0;
      while (read === 0 && Date.now() < deadline) read += (await consumer.poll(100)).length;
      assert.equal(read, 1, 'the record was read before the broker froze');

      process.kill(broker.pid, 'SIGSTOP');
      frozen = true;
      const started = Date.now();
      closing = consumer.close({ timeoutMs: CLOSE_TIMEOUT_MS });
      // Not waited for longer than this, so a close that ignores its timeout fails here rather than hangs.
      await Promise.race([closing.catch(() => {}), sleep(CLOSE_TIMEOUT_MS + 8000)]);
      const elapsed = Date.now() - started;
      assert.ok(
        elapsed < CLOSE_TIMEOUT_MS + SLACK_MS,
        `close took ${elapsed} ms, timeout ${CLOSE_TIMEOUT_MS} ms`,
      );
      await closing;
    } finally {
      if (frozen) {
        process.kill(broker.pid, 'SIGCONT');
        frozen = false;
      }
      await (closing ?? consumer.close()).catch(() => {});
    }
  });
});
