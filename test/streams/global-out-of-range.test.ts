// A global store whose topic loses records while the global thread reads them: Kafka's global consumer has
// auto.offset.reset "none" (StreamsConfig.getGlobalConsumerConfigs), and GlobalStreamThread answers the
// out-of-range position by wiping the global state and failing ("Bootstrapping global state failed" while
// loading: start() fails, the client ends in ERROR). A restart rebuilds the store from what the topic holds.
// Jumping to the first offset instead would keep, and checkpoint, rows the topic no longer has.
// The failed client releases its process id: a later instance in the same process gets the same one back.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
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
import { leavingGroup, type StreamsBroker, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();
const APP = 'gor';
const TOPIC = 'gor-names';

function instance(env: StreamsBroker, extra: StreamsProperties = {}): KafkaStreams {
  const builder = new StreamsBuilder();
  builder.globalTable(TOPIC, Consumed.with(S, S), Materialized.as('names'));
  builder.stream('gor-visits', Consumed.with(S, S)).foreach(() => {});
  return new KafkaStreams(builder.build(), {
    'application.id': APP,
    'bootstrap.servers': env.bootstrap,
    'state.dir': env.dirs[0]!,
    ...extra,
  });
}

/** Deletes the topic's records before `offset`, synchronously (from a child process), as a listener must. */
function deleteRecordsNow(bootstrap: string, offset: number): void {
  const admin = fileURLToPath(new URL('../../src/client/admin.js', import.meta.url));
  const script =
    `import { Admin } from ${JSON.stringify(admin)};` +
    `const a = new Admin({ bootstrapServers: ${JSON.stringify(bootstrap)} });` +
    `const [r] = await a.deleteRecords([{ topic: ${JSON.stringify(TOPIC)}, partition: 0, offset: ${offset} }]);` +
    'await a.close(); if (r.error) { console.error(r.error); process.exit(1); }';
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
}

async function runningStore(streams: KafkaStreams) {
  await streams.start();
  await waitUntil(
    () => streams.state() === 'RUNNING',
    30_000,
    () => `state ${streams.state()}`,
  );
  return streams.store(
    StoreQueryParameters.fromNameAndType('names', QueryableStoreTypes.keyValueStore<string, string>()),
  );
}

describe('a global topic truncated while the global thread loads it', () => {
  const env = useStreamsBroker({ [TOPIC]: 1, 'gor-visits': 1 }, 1);

  it('wipes the global state and fails the start; a restart rebuilds from what the topic holds', async () => {
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const appended = 600;
    const deleteBefore = 3 + appended / 2;
    try {
      for (const i of [0, 1, 2])
        await producer.send({ topic: TOPIC, key: Buffer.from(`c${i}`), value: Buffer.from(`name ${i}`) });
      const first = instance(env);
      assert.equal((await runningStore(first)).get('c0'), 'name 0');
      const processId = first.processId;
      await first.close(leavingGroup()); // checkpoint: offset 3 next
      // Each record in a batch of its own: loading them takes one fetch each.
      for (let i = 0; i < appended; i++)
        await producer.send({ topic: TOPIC, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) });

      const second = instance(env, {
        'global.consumer.fetch.max.bytes': 1,
        'global.consumer.max.partition.fetch.bytes': 1,
      });
      const started: string[] = [];
      second.setGlobalStateRestoreListener({
        onRestoreStart: (tp, store, from, end) => {
          started.push(`${tp.topic}-${tp.partition} ${store} ${from}-${end}`);
          // Before the first fetch's answer: the rows from the checkpoint on go (the c's went before it).
          deleteRecordsNow(env.bootstrap, deleteBefore);
        },
        onBatchRestored: () => {},
        onRestoreEnd: () => {},
      });
      const logs: string[] = [];
      second.setLogger((m) => logs.push(m));
      await assert.rejects(
        second.start(),
        (e: Error) =>
          e.message ===
          'Bootstrapping global state failed. You can restart KafkaStreams to recover ' + 'from this error.',
      );
      assert.deepEqual(started, [`${TOPIC}-0 names 3-${3 + appended}`]);
      assert.equal(second.state(), 'ERROR');
      assert.ok(
        logs.some((m) => m.includes('wiping it')),
        logs.join('\n'),
      );
      assert.equal(existsSync(join(env.dirs[0]!, APP, 'global')), false, 'the global state is wiped');

      const third = instance(env);
      const thirdLogs: string[] = [];
      third.setLogger((m) => thirdLogs.push(m));
      try {
        // The failed client released the state directory's process id (Kafka's shutdown to ERROR releases the
        // directory): the next instance of this process takes it back rather than a fresh one.
        assert.equal(third.processId, processId, thirdLogs.join('\n'));
        const store = await runningStore(third);
        assert.equal(store.get('c0'), null, 'a row the topic no longer has');
        assert.equal(store.get(`k${deleteBefore - 4}`), null);
        assert.equal(store.get(`k${deleteBefore - 3}`), `v${deleteBefore - 3}`);
        assert.equal(store.approximateNumEntries(), appended - (deleteBefore - 3));
      } finally {
        await third.close(leavingGroup());
      }
    } finally {
      await producer.close();
    }
  });
});
