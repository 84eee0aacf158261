// KStream.repartition() and KStream.toTable() in the test driver: Kafka's node, topic and store names, the
// partition count a Repartitioned asks for, and a table's latest value per key (null deletes).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Consumed,
  Materialized,
  Produced,
  Repartitioned,
  Serdes,
  StreamsBuilder,
  TopologyTestDriver,
} from '../../src/streams/index.js';

const S = Serdes.String();

describe('repartition()', () => {
  it('writes through <name>-repartition with the partition count asked for, and records flow on', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('in', Consumed.with(S, S))
      .selectKey((_k, v) => v)
      .repartition(Repartitioned.with(S, S).withName('by-value').withNumberOfPartitions(4))
      .to('out', Produced.with(S, S));
    const t = builder.build();
    assert.deepEqual([...t.internalTopics], [['by-value-repartition', 4]]);
    const text = t.describe().toString();
    for (const line of [
      'Sink: by-value-repartition-sink (topic: by-value-repartition)',
      'Source: by-value-repartition-source (topics: [by-value-repartition])',
    ])
      assert.ok(text.includes(line), text);
    const driver = new TopologyTestDriver(t);
    try {
      driver.createInputTopic('in', S, S).pipeInput('k', 'v', 1);
      assert.deepEqual(driver.createOutputTopic('out', S, S).readKeyValuesToList(), [
        { key: 'v', value: 'v' },
      ]);
    } finally {
      driver.close();
    }
  });

  it('a generated name is KSTREAM-REPARTITION-<n>', () => {
    const builder = new StreamsBuilder();
    builder.stream('in', Consumed.with(S, S)).repartition().to('out');
    assert.deepEqual(
      [...builder.build().internalTopics.keys()],
      ['KSTREAM-REPARTITION-0000000001-repartition'],
    );
  });
});

describe('toTable()', () => {
  it('has no store unless something needs one, as Kafka; each update goes on, null as a delete', () => {
    const builder = new StreamsBuilder();
    builder.stream('in', Consumed.with(S, S)).toTable().toStream().to('out', Produced.with(S, S));
    const t = builder.build();
    assert.ok(
      t.describe().toString().includes('Processor: KSTREAM-TOTABLE-0000000001 (stores: [])'),
      t.describe().toString(),
    );
    const driver = new TopologyTestDriver(t);
    try {
      const input = driver.createInputTopic('in', S, S);
      input.pipeInput('a', '1', 1);
      input.pipeInput('a', '2', 2);
      input.pipeInput('b', '3', 3);
      input.pipeInput('a', null, 4);
      assert.equal(driver.getKeyValueStore('KSTREAM-TOTABLE-STATE-STORE-0000000002'), null);
      assert.deepEqual(driver.createOutputTopic('out', S, S).readValuesToList(), ['1', '2', '3', null]);
    } finally {
      driver.close();
    }
  });

  it('keeps the latest value per key in a store named as Kafka names it once a join reads it', () => {
    const builder = new StreamsBuilder();
    const table = builder.stream('in', Consumed.with(S, S)).toTable();
    builder
      .stream('lookups', Consumed.with(S, S))
      .leftJoin(table, (l, v) => `${l}=${v}`)
      .to('out', Produced.with(S, S));
    const t = builder.build();
    assert.ok(
      t
        .describe()
        .toString()
        .includes('Processor: KSTREAM-TOTABLE-0000000001 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000002])'),
      t.describe().toString(),
    );
    const driver = new TopologyTestDriver(t);
    try {
      const input = driver.createInputTopic('in', S, S);
      input.pipeInput('a', '1', 1);
      input.pipeInput('a', '2', 2);
      input.pipeInput('b', '3', 3);
      input.pipeInput('a', null, 4);
      const store = driver.getKeyValueStore<string, string>('KSTREAM-TOTABLE-STATE-STORE-0000000002')!;
      assert.equal(store.get('a'), null);
      assert.equal(store.get('b'), '3');
      const lookups = driver.createInputTopic('lookups', S, S);
      lookups.pipeInput('a', 'x', 5);
      lookups.pipeInput('b', 'y', 6);
      assert.deepEqual(driver.createOutputTopic('out', S, S).readValuesToList(), ['x=null', 'y=3']);
    } finally {
      driver.close();
    }
  });

  it('after a key change it repartitions first, and Materialized names the store', () => {
    const builder = new StreamsBuilder();
    const table = builder
      .stream('in', Consumed.with(S, S))
      .selectKey((_k, v) => v.split('=')[0]!)
      .mapValues((v) => v.split('=')[1]!)
      .toTable(undefined, Materialized.as<string, string>('latest'));
    assert.equal(table.queryableStoreName(), 'latest');
    const t = builder.build();
    assert.deepEqual([...t.internalTopics.keys()], ['KSTREAM-TOTABLE-0000000003-repartition']);
    const driver = new TopologyTestDriver(t);
    try {
      const input = driver.createInputTopic('in', S, S);
      input.pipeInput('x', 'k=1', 1);
      input.pipeInput('y', 'k=2', 2);
      assert.equal(driver.getKeyValueStore<string, string>('latest')!.get('k'), '2');
    } finally {
      driver.close();
    }
  });
});
