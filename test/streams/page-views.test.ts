// A windowed page-view count through a broker: views (JSON) joined with a users table (stream-table join,
// co-partitioned topics), regrouped by region (repartition), counted per one-second window, and suppressed
// until each window closes, so that every (region, window) is written exactly once with its final count. The
// reference is computed here from the same input. One view is not JSON: it goes through the deserialization
// exception handler (log and continue). Co-partitioning is checked at start.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  Grouped,
  KafkaStreams,
  KeyValue,
  Produced,
  type RawRecord,
  Serdes,
  StreamsBuilder,
  Suppressed,
  TimeWindows,
} from '../../src/streams/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { seeded, stateDir, TopicFollower } from './streams-helpers.js';

const PARTITIONS = 2;
const REGIONS = ['eu', 'us', 'asia'];
const WINDOW_MS = 1000;
const GRACE_MS = 20_000;
const END_MS = 100_000;

interface View {
  page: string;
}

function topology() {
  const builder = new StreamsBuilder();
  const users = builder.table('users', Consumed.with(Serdes.String(), Serdes.String()));
  builder
    .stream('page-views', Consumed.with(Serdes.String(), Serdes.JSON<View>()))
    .join(users, (_view, region) => region)
    .groupBy((_user, region) => region, Grouped.with(Serdes.String(), Serdes.String()).withName('by-region'))
    // Records reach a repartition partition from several upstream tasks, so their timestamps interleave: the
    // grace period covers the whole input, and the last views (at END_MS) close every window.
    .windowedBy(TimeWindows.ofSizeAndGrace(WINDOW_MS, GRACE_MS))
    .count()
    .suppress(Suppressed.untilWindowCloses())
    .toStream()
    .map((w, count) => KeyValue.pair(`${w.key}@${w.window.start()}`, count))
    .to('region-window-counts', Produced.with(Serdes.String(), Serdes.Long()));
  return builder.build();
}

describe('windowed page views through a broker', () => {
  let broker: BrokerProcess;
  let bootstrap = '';
  const dir = stateDir();

  before(async () => {
    broker = await startBroker();
    bootstrap = broker.bootstrap;
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([
      { topic: 'users', numPartitions: PARTITIONS, replicationFactor: 1 },
      { topic: 'page-views', numPartitions: PARTITIONS, replicationFactor: 1 },
      { topic: 'region-window-counts', numPartitions: 1, replicationFactor: 1 },
      { topic: 'other-views', numPartitions: PARTITIONS + 1, replicationFactor: 1 },
    ]);
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts joined views per region and window, once per window, as the reference does', async () => {
    const random = seeded(2026);
    const users = Array.from({ length: 20 }, (_, i) => `user-${i}`);
    // Users 0..16 have a region; 17..19 have none, so the inner join drops their views.
    const regionOf = new Map(
      users.slice(0, 17).map((u) => [u, REGIONS[Math.floor(random() * REGIONS.length)]!]),
    );
    const views = Array.from({ length: 600 }, () => ({
      user: users[Math.floor(random() * users.length)]!,
      timestamp: Math.floor(random() * 8000),
    })).sort((a, b) => a.timestamp - b.timestamp);
    const expected = new Map<string, number>();
    for (const v of views) {
      const region = regionOf.get(v.user);
      if (region === undefined) continue;
      const key = `${region}@${Math.floor(v.timestamp / WINDOW_MS) * WINDOW_MS}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }

    const producer = new Producer({ bootstrapServers: bootstrap });
    await producer.sendBatch(
      [...regionOf].map(([user, region]) => ({
        topic: 'users',
        key: Buffer.from(user),
        value: Buffer.from(region),
        timestamp: 0,
      })),
    );
    const skipped: RawRecord[] = [];
    const streams = new KafkaStreams(topology(), {
      'application.id': 'page-views',
      'bootstrap.servers': bootstrap,
      'commit.interval.ms': 100,
      'state.dir': dir,
      'default.deserialization.exception.handler': (record) => {
        skipped.push(record);
        return 'CONTINUE';
      },
    });
    const follower = new TopicFollower(bootstrap, 'region-window-counts', 1);
    follower.start();
    const admin = new Admin({ bootstrapServers: bootstrap });
    try {
      await streams.start();
      // The table is loaded (its offsets committed) before the first view is written.
      await waitUntil(
        () => streams.processedRecords() >= regionOf.size,
        30_000,
        () => `processed ${streams.processedRecords()} of ${regionOf.size} users`,
      );
      await producer.sendBatch([
        ...views.map((v) => ({
          topic: 'page-views',
          key: Buffer.from(v.user),
          value: Buffer.from(JSON.stringify({ page: 'p' })),
          timestamp: v.timestamp,
        })),
        {
          topic: 'page-views',
          key: Buffer.from(users[0]!),
          value: Buffer.from('{not json'),
          timestamp: 8000,
        },
      ]);
      // Every view processed (the joined ones twice: before and after the repartition topic) ...
      const joined = [...expected.values()].reduce((n, c) => n + c, 0);
      const total = regionOf.size + views.length + 1 + joined;
      await waitUntil(
        () => streams.processedRecords() >= total,
        60_000,
        () => `processed ${streams.processedRecords()} of ${total}`,
      );
      // ... then one view per region far later moves stream time past every window, so that all of them close
      // (sent earlier, it could overtake views of another input partition and close their windows too soon).
      await producer.sendBatch(
        REGIONS.map((region) => {
          const user = [...regionOf].find(([, r]) => r === region)![0];
          return {
            topic: 'page-views',
            key: Buffer.from(user),
            value: Buffer.from('{"page":"end"}'),
            timestamp: END_MS,
          };
        }),
      );
      await waitUntil(
        () => follower.records.length >= expected.size,
        60_000,
        () =>
          `${follower.records.length} of ${expected.size} window counts: ${follower.records.map((r) => r.key).join(' ')}`,
      );
      await new Promise((r) => setTimeout(r, 500)); // room for an unwanted duplicate to show up
      const got = new Map<string, number>();
      for (const r of follower.records) {
        assert.ok(!got.has(r.key), `window ${r.key} emitted twice`);
        got.set(r.key, Number(r.value!.readBigInt64BE(0)));
      }
      assert.deepEqual(new Map([...got].sort()), new Map([...expected].sort()));
      assert.equal(skipped.length, 1);
      assert.equal(skipped[0]!.topic, 'page-views');

      const topics = await admin.describeTopics(['page-views-by-region-repartition']);
      assert.equal(topics[0]!.partitions.length, PARTITIONS);
      const [config] = await admin.describeConfigs([
        {
          type: 'topic',
          name: 'page-views-KSTREAM-AGGREGATE-STATE-STORE-0000000006-changelog',
          keys: ['cleanup.policy'],
        },
      ]);
      assert.equal(config!.error, null);
      assert.equal(config!.configs[0]!.value, 'compact,delete');
    } finally {
      await streams.close();
      await follower.stop();
      await producer.close();
      await admin.close();
    }
  });

  it('refuses to start when a join reads topics that are not co-partitioned', async () => {
    const builder = new StreamsBuilder();
    const users = builder.table('users', Consumed.with(Serdes.String(), Serdes.String()));
    builder
      .stream('other-views', Consumed.with(Serdes.String(), Serdes.String()))
      .join(users, (v, r) => `${v}${r}`)
      .to('joined');
    const streams = new KafkaStreams(builder.build(), {
      'application.id': 'not-copartitioned',
      'bootstrap.servers': bootstrap,
      'state.dir': dir,
    });
    await assert.rejects(streams.start(), /Topics not co-partitioned: \[users\(2\), other-views\(3\)\]/);
    assert.equal(streams.state(), 'ERROR');
  });
});
