// Global stores keep a checkpoint (`<state.dir>/<application.id>/global/.checkpoint`, Kafka's OffsetCheckpoint
// format: the next offset to read per partition), so a restart reads only what the global topic got since,
// deletes included; a checkpoint that no longer fits the topic makes the stores rebuild from the beginning.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
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
} from '../../src/streams/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { leavingGroup, stateDir } from './streams-helpers.js';

const S = Serdes.String();

describe('global store checkpoints through a broker', () => {
  let broker: BrokerProcess;
  let bootstrap = '';
  const dir = stateDir();

  before(async () => {
    broker = await startBroker();
    bootstrap = broker.bootstrap;
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([
      { topic: 'countries', numPartitions: 2, replicationFactor: 1 },
      { topic: 'visits', numPartitions: 1, replicationFactor: 1 },
    ]);
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a restart reads only the records after the checkpoint; a checkpoint that does not fit rebuilds', async () => {
    const producer = new Producer({ bootstrapServers: bootstrap });
    const send = (entries: [string, string | null][]) =>
      producer.sendBatch(
        entries.map(([k, v]) => ({
          topic: 'countries',
          key: Buffer.from(k),
          value: v === null ? null : Buffer.from(v),
        })),
      );
    const run = async () => {
      const builder = new StreamsBuilder();
      builder.globalTable('countries', Consumed.with(S, S), Materialized.as('country-names'));
      builder.stream('visits', Consumed.with(S, S)).foreach(() => {});
      const streams = new KafkaStreams(builder.build(), {
        'application.id': 'global-cp',
        'bootstrap.servers': bootstrap,
        'state.dir': dir,
      });
      const logs: string[] = [];
      streams.setLogger((m) => logs.push(m));
      await streams.start();
      await waitUntil(
        () => streams.state() === 'RUNNING',
        30_000,
        () => `state ${streams.state()}`,
      );
      const loaded = logs.find((l) => l.startsWith('global stores loaded: '));
      assert.ok(loaded, logs.join('\n'));
      const applied = Number(/loaded: (\d+) records/.exec(loaded)![1]);
      const store = streams.store(
        StoreQueryParameters.fromNameAndType(
          'country-names',
          QueryableStoreTypes.keyValueStore<string, string>(),
        ),
      );
      const all = new Map(store.all().map((e) => [e.key, e.value] as const));
      await streams.close(leavingGroup());
      return { applied, all, logs };
    };
    try {
      const first: [string, string | null][] = Array.from({ length: 40 }, (_, i) => [
        `c${i}`,
        `country ${i}`,
      ]);
      await send(first);
      const one = await run();
      assert.equal(one.applied, 40);
      assert.equal(one.all.size, 40);
      const checkpointFile = join(dir, 'global-cp', 'global', '.checkpoint');
      const lines = readFileSync(checkpointFile, 'utf8').trim().split('\n');
      assert.equal(lines[0], '0');
      assert.equal(lines[1], '2');
      const next = lines.slice(2).map((l) => l.split(' '));
      assert.deepEqual(next.map((p) => p[0]).sort(), ['countries', 'countries']);
      assert.equal(
        next.reduce((n, p) => n + Number(p[2]), 0),
        40,
        'the next offsets of both partitions add up to the records read',
      );

      await send([
        ['c1', 'renamed 1'],
        ['c2', null],
        ['c99', 'new 99'],
      ]);
      const two = await run();
      assert.equal(two.applied, 3, 'only the records after the checkpoint are read');
      assert.equal(two.all.get('c1'), 'renamed 1');
      assert.equal(two.all.has('c2'), false, 'a delete after the checkpoint is applied');
      assert.equal(two.all.get('c99'), 'new 99');
      assert.equal(two.all.size, 40);

      // Offsets beyond the topic's end (another cluster, a recreated topic) do not fit: rebuilt from the start.
      writeFileSync(checkpointFile, '0\n2\ncountries 0 100000\ncountries 1 100000\n');
      const three = await run();
      assert.equal(three.applied, 43);
      assert.deepEqual(three.all, two.all);
      assert.ok(three.logs.some((l) => l.includes('rebuilding the global stores')));
    } finally {
      await producer.close();
    }
  });
});
