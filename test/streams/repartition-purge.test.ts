// Purging repartition topics (Kafka's repartition.purge.interval.ms): after a commit, a stream thread deletes the
// records of the repartition topics it reads up to their committed offsets (DeleteRecords), so their log start
// offsets follow the application; the user's input topic is never purged, and with the default interval (30 s)
// nothing is purged in the first seconds of a run.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  QueryableStoreTypes,
  Serdes,
  StoreQueryParameters,
  StreamsBuilder,
  type StreamsProperties,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const INPUT = 'rp-input';
const PARTITIONS = 2;

const broker = useStreamsBroker({ [INPUT]: PARTITIONS }, 2);

/** Counts the input's values: groupBy re-keys, so every record goes through `<app>-rp-counts-repartition`. */
function countByValue(appId: string, dir: string, extra: StreamsProperties): KafkaStreams {
  const builder = new StreamsBuilder();
  builder
    .stream(INPUT, Consumed.with(S, S))
    .groupBy((_k, v) => v)
    .count(Materialized.as('rp-counts'));
  return new KafkaStreams(builder.build(), {
    'application.id': appId,
    'bootstrap.servers': broker.bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 200,
    'statestore.cache.max.bytes': 0,
    ...extra,
  });
}

async function offsets(admin: Admin, topic: string, spec: 'earliest' | 'latest'): Promise<number[]> {
  const answers = await admin.listOffsets(
    Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, spec })),
  );
  return answers.sort((x, y) => x.partition - y.partition).map((a) => a.offset);
}

test('committed records of repartition topics are deleted, input topics are left alone', async () => {
  const purging = countByValue('rp-app', broker.dirs[0]!, { 'repartition.purge.interval.ms': 0 });
  // Kafka's default interval: its first purge is 30 s after start, well after this test's checks.
  const waiting = countByValue('rp-default', broker.dirs[1]!, {});
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  try {
    await purging.start();
    await waiting.start();
    const values = ['red', 'green', 'blue', 'white', 'black'];
    const reference = new Map<string, number>();
    const records = Array.from({ length: 400 }, (_, i) => ({ key: `k${i}`, value: values[(i * 3) % 5]! }));
    for (const r of records) reference.set(r.value, (reference.get(r.value) ?? 0) + 1);
    await producer.sendBatch(
      records.map((r) => ({ topic: INPUT, key: Buffer.from(r.key), value: Buffer.from(r.value) })),
    );

    for (const app of [purging, waiting]) {
      await waitUntil(
        () => app.state() === 'RUNNING',
        30_000,
        () => app.state(),
      );
      const store = app.store(
        StoreQueryParameters.fromNameAndType(
          'rp-counts',
          QueryableStoreTypes.keyValueStore<string, number>(),
        ),
      );
      await waitUntil(
        () => values.every((v) => store.get(v) === reference.get(v)),
        60_000,
        () => values.map((v) => `${v}=${store.get(v)}/${reference.get(v)}`).join(' '),
      );
    }

    const repartition = 'rp-app-rp-counts-repartition';
    const written = await offsets(admin, repartition, 'latest');
    assert.equal(
      written.reduce((n, o) => n + o, 0),
      records.length,
      'every input record went through the repartition topic',
    );
    // Every record is processed and, after the next commits, consumed for good: the log start offsets reach
    // the end offsets.
    let start = await offsets(admin, repartition, 'earliest');
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      if (start.every((o, p) => o === written[p])) break;
      await new Promise((r) => setTimeout(r, 200));
      start = await offsets(admin, repartition, 'earliest');
    }
    assert.deepEqual(start, written, 'the log start offsets reach the end offsets');

    assert.deepEqual(await offsets(admin, INPUT, 'earliest'), [0, 0], 'the input topic is not purged');
    const other = 'rp-default-rp-counts-repartition';
    assert.equal(
      (await offsets(admin, other, 'latest')).reduce((n, o) => n + o, 0),
      records.length,
    );
    assert.deepEqual(
      await offsets(admin, other, 'earliest'),
      [0, 0],
      'repartition.purge.interval.ms 30000: not purged yet',
    );
  } finally {
    await admin.close();
    await producer.close();
    await purging.close();
    await waiting.close();
  }
});
