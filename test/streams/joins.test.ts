// Stream-stream windowed joins, table-table joins and stream-globalTable joins in the test driver: Kafka's node
// and store names in describe(), and results against references worked out by hand from Kafka's join rules.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Consumed,
  JoinWindows,
  Materialized,
  Produced,
  Serdes,
  StreamJoined,
  StreamsBuilder,
  TopologyTestDriver,
} from '../../src/streams/index.js';

const S = Serdes.String();
/** Scans for closed windows after every record, not once per wall-clock second (Kafka's join tests set it too). */
const SCAN_EVERY_RECORD = { '__emit.interval.ms.kstreams.outer.join.spurious.results.fix__': 0 };

type Kind = 'join' | 'leftJoin' | 'outerJoin';

function streamStream(kind: Kind, windows: JoinWindows, joined?: StreamJoined<string, string, string>) {
  const builder = new StreamsBuilder();
  const left = builder.stream('left', Consumed.with(S, S));
  const right = builder.stream('right', Consumed.with(S, S));
  const joiner = (l: string | null, r: string | null) => `${l}+${r}`;
  const sj = joined ?? StreamJoined.with(S, S, S);
  const out =
    kind === 'join'
      ? left.join(right, joiner, windows, sj)
      : kind === 'leftJoin'
        ? left.leftJoin(right, joiner, windows, sj)
        : left.outerJoin(right, joiner, windows, sj);
  out.to('out', Produced.with(S, S));
  return builder.build();
}

describe('stream-stream joins', () => {
  it('describe() prints the windowed join as Kafka Streams prints it', () => {
    const text = streamStream('join', JoinWindows.ofTimeDifferenceWithNoGrace(10)).describe().toString();
    assert.equal(
      text,
      [
        'Topologies:',
        '   Sub-topology: 0',
        '    Source: KSTREAM-SOURCE-0000000000 (topics: [left])',
        '      --> KSTREAM-WINDOWED-0000000002',
        '    Source: KSTREAM-SOURCE-0000000001 (topics: [right])',
        '      --> KSTREAM-WINDOWED-0000000003',
        '    Processor: KSTREAM-WINDOWED-0000000002 (stores: [KSTREAM-JOINTHIS-0000000004-store])',
        '      --> KSTREAM-JOINTHIS-0000000004',
        '      <-- KSTREAM-SOURCE-0000000000',
        '    Processor: KSTREAM-WINDOWED-0000000003 (stores: [KSTREAM-JOINOTHER-0000000005-store])',
        '      --> KSTREAM-JOINOTHER-0000000005',
        '      <-- KSTREAM-SOURCE-0000000001',
        '    Processor: KSTREAM-JOINOTHER-0000000005 (stores: [KSTREAM-JOINTHIS-0000000004-store])',
        '      --> KSTREAM-MERGE-0000000006',
        '      <-- KSTREAM-WINDOWED-0000000003',
        '    Processor: KSTREAM-JOINTHIS-0000000004 (stores: [KSTREAM-JOINOTHER-0000000005-store])',
        '      --> KSTREAM-MERGE-0000000006',
        '      <-- KSTREAM-WINDOWED-0000000002',
        '    Processor: KSTREAM-MERGE-0000000006 (stores: [])',
        '      --> KSTREAM-SINK-0000000007',
        '      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-JOINOTHER-0000000005',
        '    Sink: KSTREAM-SINK-0000000007 (topic: out)',
        '      <-- KSTREAM-MERGE-0000000006',
        '',
        '',
      ].join('\n'),
    );
  });

  it('left and outer joins name their stores as Kafka does, with the shared outer store', () => {
    const left = streamStream('leftJoin', JoinWindows.ofTimeDifferenceWithNoGrace(10));
    assert.deepEqual([...left.stores.keys()].sort(), [
      'KSTREAM-JOINTHIS-0000000004-store',
      'KSTREAM-OUTEROTHER-0000000005-store',
      'KSTREAM-OUTERSHARED-0000000004-store',
    ]);
    const outer = streamStream(
      'outerJoin',
      JoinWindows.ofTimeDifferenceWithNoGrace(10),
      StreamJoined.as('j'),
    );
    assert.deepEqual([...outer.stores.keys()].sort(), [
      'j-outer-other-join-store',
      'j-outer-shared-join-store',
      'j-outer-this-join-store',
    ]);
    const store = left.stores.get('KSTREAM-JOINTHIS-0000000004-store')!;
    // retention.ms of the changelog: the store's retention plus one day, set when the topic is created.
    assert.deepEqual(store.logConfig, { 'cleanup.policy': 'delete' });
    assert.equal(store.window?.retentionMs, 20);
  });

  it("StreamJoined.withName names the join's processors as Kafka does (StreamsBuilderTest)", () => {
    const names = (kind: Kind) =>
      [
        ...streamStream(
          kind,
          JoinWindows.ofTimeDifferenceWithNoGrace(10),
          StreamJoined.as<string, string, string>('op').withName('op'),
        ).nodes.keys(),
      ].filter((n) => n.startsWith('op-'));
    assert.deepEqual(names('join'), [
      'op-this-windowed',
      'op-other-windowed',
      'op-this-join',
      'op-other-join',
      'op-merge',
    ]);
    assert.deepEqual(names('leftJoin'), [
      'op-this-windowed',
      'op-other-windowed',
      'op-this-join',
      'op-outer-other-join',
      'op-merge',
    ]);
    assert.deepEqual(names('outerJoin'), [
      'op-this-windowed',
      'op-other-windowed',
      'op-outer-this-join',
      'op-outer-other-join',
      'op-merge',
    ]);
  });

  it('an inner join pairs the records of a key within the window, each pair once, at the later timestamp', () => {
    const driver = new TopologyTestDriver(streamStream('join', JoinWindows.ofTimeDifferenceWithNoGrace(10)));
    try {
      const left = driver.createInputTopic('left', S, S);
      const right = driver.createInputTopic('right', S, S);
      const out = driver.createOutputTopic('out', S, S);
      left.pipeInput('k', 'a1', 0);
      right.pipeInput('k', 'b1', 5);
      right.pipeInput('k', 'b2', 20); // left window [10, 30]: a1@0 is out of reach
      left.pipeInput('k', 'a2', 15); // right window [5, 25]: b1 and b2
      left.pipeInput('other', 'a3', 15);
      right.pipeInput('k', 'b1', 5); // a duplicate of key and time is kept and joins too
      assert.deepEqual(
        out.readRecordsToList().map((r) => `${r.value}@${r.timestamp}`),
        ['a1+b1@5', 'a2+b1@15', 'a2+b2@20', 'a1+b1@5', 'a2+b1@15'],
      );
    } finally {
      driver.close();
    }
  });

  it('a left join emits an unmatched record with null once its window has closed, never one that found a partner', () => {
    const driver = new TopologyTestDriver(
      streamStream('leftJoin', JoinWindows.ofTimeDifferenceAndGrace(10, 5)),
      SCAN_EVERY_RECORD,
    );
    try {
      const left = driver.createInputTopic('left', S, S);
      const right = driver.createInputTopic('right', S, S);
      const out = driver.createOutputTopic('out', S, S);
      left.pipeInput('k', 'a1', 0);
      right.pipeInput('k', 'b1', 5); // joins a1, which is then no longer waiting
      left.pipeInput('k', 'a2', 30); // waits until stream time passes 30 + 10 + 5
      right.pipeInput('x', 'b9', 45);
      assert.deepEqual(out.readValuesToList(), ['a1+b1']);
      right.pipeInput('x', 'b9', 46);
      assert.deepEqual(
        out.readRecordsToList().map((r) => `${r.value}@${r.timestamp}`),
        ['a2+null@30'],
      );
    } finally {
      driver.close();
    }
  });

  it('an outer join emits unmatched records of both sides after their windows close', () => {
    const driver = new TopologyTestDriver(
      streamStream('outerJoin', JoinWindows.ofTimeDifferenceWithNoGrace(10)),
      SCAN_EVERY_RECORD,
    );
    try {
      const left = driver.createInputTopic('left', S, S);
      const right = driver.createInputTopic('right', S, S);
      const out = driver.createOutputTopic('out', S, S);
      left.pipeInput('k', 'a1', 0);
      right.pipeInput('k', 'b1', 100);
      left.pipeInput('z', 'a9', 200);
      left.pipeInput('m', 'a7', 200);
      right.pipeInput('m', 'b7', 195);
      assert.deepEqual(
        out.readRecordsToList().map((r) => `${r.value}@${r.timestamp}`),
        ['a1+null@0', 'null+b1@100', 'a7+b7@200'],
      );
    } finally {
      driver.close();
    }
  });

  it('keys changed upstream are repartitioned on both sides before the join', () => {
    const builder = new StreamsBuilder();
    const left = builder.stream('left', Consumed.with(S, S)).selectKey((_k, v) => v.split(':')[0]!);
    const right = builder.stream('right', Consumed.with(S, S)).selectKey((_k, v) => v.split(':')[0]!);
    left
      .join(
        right,
        (l, r) => `${l}|${r}`,
        JoinWindows.ofTimeDifferenceWithNoGrace(100),
        StreamJoined.with(S, S, S).withName('j'),
      )
      .to('out', Produced.with(S, S));
    const topology = builder.build();
    assert.deepEqual([...topology.internalTopics.keys()], ['j-left-repartition', 'j-right-repartition']);
    const driver = new TopologyTestDriver(topology);
    try {
      driver.createInputTopic('left', S, S).pipeInput('1', 'u:x', 1);
      driver.createInputTopic('right', S, S).pipeInput('2', 'u:y', 2);
      assert.deepEqual(driver.createOutputTopic('out', S, S).readKeyValuesToList(), [
        { key: 'u', value: 'u:x|u:y' },
      ]);
    } finally {
      driver.close();
    }
  });
});

describe('table-table joins', () => {
  function tables(kind: Kind, materialized: boolean) {
    const builder = new StreamsBuilder();
    const lt = builder.table('lt', Consumed.with(S, S));
    const rt = builder.table('rt', Consumed.with(S, S));
    const joiner = (l: string | null, r: string | null) => `${l}+${r}`;
    const m = materialized ? Materialized.as<string, string>('joined').withValueSerde(S) : undefined;
    const t =
      kind === 'join'
        ? lt.join(rt, joiner, undefined, m)
        : kind === 'leftJoin'
          ? lt.leftJoin(rt, joiner, undefined, m)
          : lt.outerJoin(rt, joiner, undefined, m);
    t.toStream().to('out', Produced.with(S, S));
    return builder.build();
  }

  it('names its nodes as Kafka does', () => {
    const text = tables('join', false).describe().toString();
    for (const line of [
      'Processor: KTABLE-JOINTHIS-0000000007 (stores: [rt-STATE-STORE-0000000003])',
      'Processor: KTABLE-JOINOTHER-0000000008 (stores: [lt-STATE-STORE-0000000000])',
      '      <-- KTABLE-JOINTHIS-0000000007, KTABLE-JOINOTHER-0000000008',
      'Source: KSTREAM-SOURCE-0000000001 (topics: [lt])',
    ])
      assert.ok(text.includes(line), `${line} in\n${text}`);
  });

  for (const kind of ['join', 'leftJoin', 'outerJoin'] as Kind[]) {
    it(`${kind} emits the joined value on each side's update, and retracts`, () => {
      const driver = new TopologyTestDriver(tables(kind, kind === 'join'));
      try {
        const lt = driver.createInputTopic('lt', S, S);
        const rt = driver.createInputTopic('rt', S, S);
        lt.pipeInput('k', 'a1', 1);
        rt.pipeInput('k', 'b1', 2);
        lt.pipeInput('k', 'a2', 3);
        rt.pipeInput('k', null, 4);
        rt.pipeInput('m', 'c', 5);
        const expected = {
          join: ['a1+b1', 'a2+b1', null],
          leftJoin: ['a1+null', 'a1+b1', 'a2+b1', 'a2+null'],
          outerJoin: ['a1+null', 'a1+b1', 'a2+b1', 'a2+null', 'null+c'],
        }[kind];
        assert.deepEqual(driver.createOutputTopic('out', S, S).readValuesToList(), expected);
        if (kind === 'join') {
          const store = driver.getKeyValueStore<string, string>('joined')!;
          assert.equal(store.get('k'), null);
          lt.pipeInput('m', 'a3', 6);
          assert.equal(store.get('m'), 'a3+c');
        }
      } finally {
        driver.close();
      }
    });
  }
});

describe('stream-globalTable joins', () => {
  function topology(left: boolean) {
    const builder = new StreamsBuilder();
    const users = builder.globalTable('users', Consumed.with(S, S));
    const orders = builder.stream('orders', Consumed.with(S, S));
    const joiner = (order: string, region: string | null) => `${order}@${region}`;
    const keyOf = (_orderId: string, order: string) => order.split(':')[0]!;
    (left ? orders.leftJoin(users, keyOf, joiner) : orders.join(users, keyOf, joiner)).to(
      'out',
      Produced.with(S, S),
    );
    return builder.build();
  }

  it('describe() prints the global store as Kafka does, as a sub-topology that makes no tasks', () => {
    const t = topology(true);
    assert.equal(
      t.describe().toString(),
      [
        'Topologies:',
        '   Sub-topology: 0 for global store (will not generate tasks)',
        '    Source: KSTREAM-SOURCE-0000000001 (topics: [users])',
        '      --> KTABLE-SOURCE-0000000002',
        '    Processor: KTABLE-SOURCE-0000000002 (stores: [users-STATE-STORE-0000000000])',
        '      --> none',
        '      <-- KSTREAM-SOURCE-0000000001',
        '  Sub-topology: 1',
        '    Source: KSTREAM-SOURCE-0000000003 (topics: [orders])',
        '      --> KSTREAM-LEFTJOIN-0000000004',
        '    Processor: KSTREAM-LEFTJOIN-0000000004 (stores: [])',
        '      --> KSTREAM-SINK-0000000005',
        '      <-- KSTREAM-SOURCE-0000000003',
        '    Sink: KSTREAM-SINK-0000000005 (topic: out)',
        '      <-- KSTREAM-LEFTJOIN-0000000004',
        '',
        '',
      ].join('\n'),
    );
    assert.deepEqual(t.sourceTopics(), ['orders']);
    assert.deepEqual(t.globalTopics(), ['users']);
  });

  it('joins on a key picked from the value; inner drops misses, left keeps them', () => {
    for (const left of [false, true]) {
      const driver = new TopologyTestDriver(topology(left));
      try {
        const users = driver.createInputTopic('users', S, S);
        const orders = driver.createInputTopic('orders', S, S);
        users.pipeInput('alice', 'eu', 1);
        orders.pipeInput('o1', 'alice:book', 2);
        orders.pipeInput('o2', 'bob:pen', 3);
        users.pipeInput('alice', 'us', 4);
        orders.pipeInput('o3', 'alice:ink', 5);
        assert.deepEqual(driver.createOutputTopic('out', S, S).readKeyValuesToList(), [
          { key: 'o1', value: 'alice:book@eu' },
          ...(left ? [{ key: 'o2', value: 'bob:pen@null' }] : []),
          { key: 'o3', value: 'alice:ink@us' },
        ]);
      } finally {
        driver.close();
      }
    }
  });
});
