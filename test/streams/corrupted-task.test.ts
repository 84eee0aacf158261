// A task with two stores, one of whose changelogs is truncated past the task's checkpoint or position: Kafka marks
// the task corrupted and drops the offsets of all its changelogs, not only the truncated one's
// (TaskManager.closeDirtyAndRevive and DefaultStateUpdater mark task.changelogPartitions() corrupted), so every
// store of the task is restored again from its changelog's first offset: over its contents under at_least_once,
// wiped first under exactly_once_v2. The restore listener hears the untouched store's restoration from offset 0.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  type ProcessingGuarantee,
  QueryableStoreTypes,
  Serdes,
  StoreQueryParameters,
  StreamsBuilder,
  type StreamsProperties,
} from '../../src/streams/index.js';
import { waitUntil } from '../helpers/wait.js';
import { leavingGroup, type StreamsBroker, useStreamsBroker } from './streams-helpers.js';

const S = Serdes.String();

/** Two counts of one input in one task: stores c1 and c2. */
function start(env: StreamsBroker, app: string, dir: string, extra: StreamsProperties): KafkaStreams {
  const builder = new StreamsBuilder();
  const input = builder.stream(`${app}-in`, Consumed.with(S, S));
  input.groupByKey().count(Materialized.as('c1'));
  input.groupByKey().count(Materialized.as('c2'));
  return new KafkaStreams(builder.build(), {
    'application.id': app,
    'bootstrap.servers': env.bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 100,
    // One changelog record per input record and store.
    'statestore.cache.max.bytes': 0,
    ...extra,
  });
}

function countOf(streams: KafkaStreams, store: string, key: string): number | null {
  return streams
    .store(StoreQueryParameters.fromNameAndType(store, QueryableStoreTypes.keyValueStore<string, number>()))
    .get(key);
}

/** Deletes the records of partition 0 of `topic` before `offset`, synchronously (from a restore listener). */
function deleteRecordsNow(bootstrap: string, topic: string, offset: number): void {
  const admin = fileURLToPath(new URL('../../src/client/admin.js', import.meta.url));
  const script =
    `import { Admin } from ${JSON.stringify(admin)};` +
    `const a = new Admin({ bootstrapServers: ${JSON.stringify(bootstrap)} });` +
    `const [r] = await a.deleteRecords([{ topic: ${JSON.stringify(topic)}, partition: 0, offset: ${offset} }]);` +
    'await a.close(); if (r.error) { console.error(r.error); process.exit(1); }';
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
}

describe('a corrupted task restores all its stores again', () => {
  const env = useStreamsBroker({ 'ct-in': 1, 'ct-eos-in': 1 }, 2);

  /**
   * Runs `app` until a is counted 3 times in both stores, closes it, lets `truncate` cut c1's changelog, and
   * starts it again: answers its restore listener's lines once c2 answers `expected` for a.
   */
  async function restartAfterTruncation(
    app: string,
    dir: string,
    guarantee: ProcessingGuarantee,
    extra: StreamsProperties,
    truncate: (admin: Admin, producer: Producer) => Promise<(store: string) => void>,
  ): Promise<{ restoring: string[]; logs: string[] }> {
    const producer = new Producer({ bootstrapServers: env.bootstrap });
    const admin = new Admin({ bootstrapServers: env.bootstrap });
    const eos = { 'processing.guarantee': guarantee };
    try {
      const first = start(env, app, dir, eos);
      await first.start();
      for (const _ of [1, 2, 3])
        await producer.send({ topic: `${app}-in`, key: Buffer.from('a'), value: Buffer.from('x') });
      await waitUntil(
        () =>
          first.state() === 'RUNNING' && countOf(first, 'c1', 'a') === 3 && countOf(first, 'c2', 'a') === 3,
        30_000,
        () => `state ${first.state()}`,
      );
      await first.close(leavingGroup());
      const onStart = await truncate(admin, producer);
      const second = start(env, app, dir, { ...eos, ...extra });
      const restoring: string[] = [];
      second.setGlobalStateRestoreListener({
        onRestoreStart: (tp, store, from, end) => {
          restoring.push(`start ${tp.topic}-${tp.partition} ${store} ${from}-${end}`);
          onStart(store);
        },
        onBatchRestored: () => {},
        onRestoreEnd: (tp, store, total) =>
          restoring.push(`end ${tp.topic}-${tp.partition} ${store} ${total}`),
      });
      const logs: string[] = [];
      second.setLogger((m) => logs.push(m));
      try {
        await second.start();
        await waitUntil(
          () => second.state() === 'RUNNING' && countOf(second, 'c2', 'a') === 3,
          30_000,
          () => `state ${second.state()}\n${restoring.join('\n')}\n${logs.join('\n')}`,
        );
      } finally {
        await second.close(leavingGroup());
      }
      return { restoring, logs };
    } finally {
      await admin.close();
      await producer.close();
    }
  }

  it('under at_least_once, c1 truncated while away: c2 is replayed from its first offset too', async () => {
    const app = 'ct';
    const { restoring, logs } = await restartAfterTruncation(
      app,
      env.dirs[0]!,
      'at_least_once',
      {},
      async (admin, producer) => {
        // c1's changelog (offsets 0-2, checkpoint 2) loses its records up to after a new one: the checkpoint
        // lies before its first offset.
        await producer.send({ topic: `${app}-c1-changelog`, key: Buffer.from('b'), value: Buffer.alloc(8) });
        const [deleted] = await admin.deleteRecords([
          { topic: `${app}-c1-changelog`, partition: 0, offset: 4 },
        ]);
        assert.equal(deleted!.error, null);
        return () => {};
      },
    );
    // c2's checkpoint (2) is dropped with c1's: its three counts are restored again, from offset 0.
    assert.ok(restoring.includes('start ct-c2-changelog-0 c2 0-3'), restoring.join('\n'));
    assert.ok(restoring.includes('end ct-c2-changelog-0 c2 3'), restoring.join('\n'));
    assert.ok(
      logs.some((m) => /checkpointed offset 2 of ct-c1-changelog-0 is before its first offset 4/.test(m)),
      logs.join('\n'),
    );
  });

  it('under exactly_once_v2, c1 truncated while it restores: c2 is wiped and restored from offset 0', async () => {
    const app = 'ct-eos';
    const appended = 300;
    const { restoring, logs } = await restartAfterTruncation(
      app,
      env.dirs[1]!,
      'exactly_once_v2',
      // One record batch per fetch: c1's restoration is still at its start when its records go.
      { 'restore.consumer.fetch.max.bytes': 1, 'restore.consumer.max.partition.fetch.bytes': 1 },
      async (admin, producer) => {
        // c1's changelog gets more records, each in a batch of its own; the checkpoint stays valid ...
        for (let i = 0; i < appended; i++)
          await producer.send({
            topic: `${app}-c1-changelog`,
            partition: 0,
            key: Buffer.from(`k${i}`),
            value: Buffer.alloc(8),
          });
        const [end] = await admin.listOffsets([
          { topic: `${app}-c1-changelog`, partition: 0, spec: 'latest' },
        ]);
        // ... until c1's restoration starts: then its records go up to the middle of the appended ones.
        return (store) => {
          if (store === 'c1')
            deleteRecordsNow(env.bootstrap, `${app}-c1-changelog`, end!.offset - appended / 2);
        };
      },
    );
    // c2 restores from its checkpoint (2) only the transaction's commit marker; the corrupted task restores it
    // again from offset 0, wiped: its three counts (none without, kept on from the checkpoint).
    assert.ok(restoring.includes(`end ${app}-c2-changelog-0 c2 3`), restoring.join('\n'));
    assert.ok(
      logs.some((m) =>
        /before its first offset \d+ \(the changelog was truncated\): task 0_0 is corrupted/.test(m),
      ),
      logs.join('\n'),
    );
  });
});
