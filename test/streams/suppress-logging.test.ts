// The changelog of a suppression's buffer (Kafka's Suppressed.BufferConfig withLoggingDisabled /
// withLoggingEnabled, KIP-446): a buffer with logging disabled gets no `<application.id>-<store>-changelog`
// topic and still suppresses; one with logging enabled and topic configs gets its changelog with those configs.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Produced,
  Serdes,
  StreamsBuilder,
  Suppressed,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { TopicFollower, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const INPUT = 'sl-input';
const QUIET_OUT = 'sl-quiet-out';
const TIME_LIMIT_MS = 1000;

const broker = useStreamsBroker({ [INPUT]: 1, [QUIET_OUT]: 1 }, 1);

test('a suppression with logging disabled has no changelog topic, one with configs has them', async () => {
  const builder = new StreamsBuilder();
  const counts = builder.stream(INPUT, Consumed.with(S, S)).groupByKey().count();
  counts
    .suppress(
      Suppressed.untilTimeLimit(
        TIME_LIMIT_MS,
        Suppressed.BufferConfig.maxRecords(100).withLoggingDisabled(),
      ).withName('quiet'),
    )
    .toStream()
    .to(QUIET_OUT, Produced.with(S, Serdes.Long()));
  counts.suppress(
    Suppressed.untilTimeLimit(
      TIME_LIMIT_MS,
      Suppressed.BufferConfig.unbounded().withLoggingEnabled({ 'segment.bytes': '1048576' }),
    ).withName('loud'),
  );
  const streams = new KafkaStreams(builder.build(), {
    'application.id': 'sl-app',
    'bootstrap.servers': broker.bootstrap,
    'state.dir': broker.dirs[0]!,
    'commit.interval.ms': 200,
  });
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const output = new TopicFollower(broker.bootstrap, QUIET_OUT, 1);
  try {
    await streams.start();
    const topics = await admin.listTopics();
    assert.ok(!topics.includes('sl-app-quiet-store-changelog'), topics.join(' '));
    assert.ok(topics.includes('sl-app-loud-store-changelog'), topics.join(' '));
    assert.ok(topics.includes('sl-app-KSTREAM-AGGREGATE-STATE-STORE-0000000001-changelog'), topics.join(' '));
    const [config] = await admin.describeConfigs([
      { type: 'topic', name: 'sl-app-loud-store-changelog', keys: ['cleanup.policy', 'segment.bytes'] },
    ]);
    assert.equal(config!.error, null);
    const values = new Map(config!.configs.map((c) => [c.name, c.value]));
    assert.equal(values.get('cleanup.policy'), 'compact');
    assert.equal(values.get('segment.bytes'), '1048576');

    // The unlogged buffer still holds updates for the time limit: a's three updates come out once, as 3, when
    // a later record moves stream time past it.
    output.start();
    const send = (key: string, timestamp: number) =>
      producer.send({ topic: INPUT, key: Buffer.from(key), value: Buffer.from('v'), timestamp });
    await send('a', 0);
    await send('a', 10);
    await send('a', 20);
    await send('b', 5000);
    await waitUntil(
      () => output.records.length >= 1,
      30_000,
      () => `output ${output.records.length} records`,
    );
    assert.deepEqual(
      output.records.map((r) => [r.key, r.value?.readBigInt64BE()]),
      [['a', 3n]],
    );
  } finally {
    await output.stop();
    await producer.close();
    await admin.close();
    await streams.close();
  }
});
