// Joins through a broker, each against a reference computed here from the same input: a windowed stream-stream
// join (impressions and clicks of an ad within 50 ms), a table-table join (profiles and scores, latest value per
// key), and a stream-globalTable left join (signups enriched with a region looked up by country, a global table
// of a topic with another partition count, loaded by the global thread before processing starts). Also checks
// the join window stores' changelogs (cleanup.policy=delete, retention = window + grace + 1 day).

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  JoinWindows,
  KafkaStreams,
  Produced,
  Repartitioned,
  Serdes,
  StreamJoined,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { seeded, stateDir, TopicFollower } from './streams-helpers.js';

const S = Serdes.String();
const PARTITIONS = 2;
const WINDOW_MS = 50;
/**
 * The timestamps below are up to 2 s out of order; a grace that long keeps every partner readable in the window
 * stores (reads see nothing older than stream time - retention, retention = window + grace), so the reference is
 * all pairs within the window.
 */
const GRACE_MS = 2000;

function topology() {
  const builder = new StreamsBuilder();
  const impressions = builder.stream('impressions', Consumed.with(S, S));
  const clicks = builder.stream('clicks', Consumed.with(S, S));
  impressions
    .join(
      clicks,
      (i, c) => `${i}/${c}`,
      JoinWindows.ofTimeDifferenceAndGrace(WINDOW_MS, GRACE_MS),
      StreamJoined.with(S, S, S).withStoreName('ad-join'),
    )
    .to('ad-joined', Produced.with(S, S));
  const profiles = builder.table('profiles', Consumed.with(S, S));
  const scores = builder.table('scores', Consumed.with(S, S));
  profiles
    .join(scores, (p, s) => `${p}=${s}`)
    .toStream()
    .to('profile-scores', Produced.with(S, S));
  const regions = builder.globalTable('regions', Consumed.with(S, S));
  builder
    .stream('signups', Consumed.with(S, S))
    // Through a repartition topic of its own partition count: a global table needs no co-partitioning.
    .repartition(Repartitioned.with(S, S).withName('signups-by-user').withNumberOfPartitions(3))
    .leftJoin(
      regions,
      (_user, country) => country,
      (country, region) => `${country}:${region ?? 'none'}`,
    )
    .to('signup-regions', Produced.with(S, S));
  return builder.build();
}

describe('joins through a broker', () => {
  let broker: BrokerProcess;
  let bootstrap = '';
  const dir = stateDir();

  before(async () => {
    broker = await startBroker();
    bootstrap = broker.bootstrap;
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([
      ...['impressions', 'clicks', 'profiles', 'scores', 'signups'].map((topic) => ({
        topic,
        numPartitions: PARTITIONS,
        replicationFactor: 1,
      })),
      { topic: 'regions', numPartitions: 3, replicationFactor: 1 },
      ...['ad-joined', 'profile-scores', 'signup-regions'].map((topic) => ({
        topic,
        numPartitions: 1,
        replicationFactor: 1,
      })),
    ]);
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stream-stream, table-table and stream-globalTable joins match their references', async () => {
    const random = seeded(18);
    const ads = Array.from({ length: 8 }, (_, i) => `ad-${i}`);
    const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)]!;
    const impressions = Array.from({ length: 150 }, (_, i) => ({
      key: pick(ads),
      value: `i${i}`,
      timestamp: Math.floor(random() * 2000),
    }));
    const clicks = Array.from({ length: 100 }, (_, i) => ({
      key: pick(ads),
      value: `c${i}`,
      timestamp: Math.floor(random() * 2000),
    }));
    const expectedPairs: string[] = [];
    for (const imp of impressions)
      for (const c of clicks)
        if (imp.key === c.key && Math.abs(imp.timestamp - c.timestamp) <= WINDOW_MS)
          expectedPairs.push(`${imp.key}:${imp.value}/${c.value}`);
    expectedPairs.sort();

    const users = Array.from({ length: 12 }, (_, i) => `u${i}`);
    const profileUpdates = Array.from({ length: 40 }, (_, i) => ({ key: pick(users), value: `p${i}` }));
    const scoreUpdates = Array.from({ length: 40 }, (_, i) => ({ key: pick(users), value: `s${i}` }));
    const lastProfile = new Map(profileUpdates.map((u) => [u.key, u.value]));
    const lastScore = new Map(scoreUpdates.map((u) => [u.key, u.value]));
    const expectedProfiles = new Map<string, string>();
    for (const [user, p] of lastProfile) {
      const s = lastScore.get(user);
      if (s !== undefined) expectedProfiles.set(user, `${p}=${s}`);
    }

    const regionOf = new Map([
      ['fr', 'eu'],
      ['de', 'eu'],
      ['us', 'na'],
      ['jp', 'asia'],
    ]);
    const countries = [...regionOf.keys(), 'zz'];
    const signups = users.map((user) => ({ key: user, value: pick(countries) }));
    const expectedSignups = new Map(
      signups.map((s) => [s.key, `${s.value}:${regionOf.get(s.value) ?? 'none'}`]),
    );

    const producer = new Producer({ bootstrapServers: bootstrap });
    const rec = (topic: string, r: { key: string; value: string; timestamp?: number }) => ({
      topic,
      key: Buffer.from(r.key),
      value: Buffer.from(r.value),
      ...(r.timestamp === undefined ? {} : { timestamp: r.timestamp }),
    });
    // The global table is complete before the application starts: the global thread loads it first.
    await producer.sendBatch([...regionOf].map(([key, value]) => rec('regions', { key, value })));
    const streams = new KafkaStreams(topology(), {
      'application.id': 'joins',
      'bootstrap.servers': bootstrap,
      'commit.interval.ms': 100,
      'state.dir': dir,
    });
    const followers = {
      ads: new TopicFollower(bootstrap, 'ad-joined', 1),
      profiles: new TopicFollower(bootstrap, 'profile-scores', 1),
      signups: new TopicFollower(bootstrap, 'signup-regions', 1),
    };
    for (const f of Object.values(followers)) f.start();
    const admin = new Admin({ bootstrapServers: bootstrap });
    try {
      await streams.start();
      await producer.sendBatch([
        ...impressions.map((r) => rec('impressions', r)),
        ...clicks.map((r) => rec('clicks', r)),
        ...profileUpdates.map((r) => rec('profiles', r)),
        ...scoreUpdates.map((r) => rec('scores', r)),
        ...signups.map((r) => rec('signups', r)),
      ]);
      const total =
        impressions.length + clicks.length + profileUpdates.length + scoreUpdates.length + signups.length;
      await waitUntil(
        () =>
          streams.processedRecords() >= total &&
          followers.ads.records.length >= expectedPairs.length &&
          followers.signups.records.length >= signups.length,
        60_000,
        () =>
          `processed ${streams.processedRecords()} of ${total}; ${followers.ads.records.length} of ${expectedPairs.length} pairs`,
      );
      await waitUntil(
        () => [...expectedProfiles].every(([k, v]) => followers.profiles.latest.get(k)?.toString() === v),
        30_000,
        () => 'profile-scores not final',
      );
      await new Promise((r) => setTimeout(r, 300)); // room for an unwanted extra pair to show up
      const pairs = followers.ads.records.map((r) => `${r.key}:${r.value!.toString()}`).sort();
      assert.deepEqual(pairs, expectedPairs);
      assert.deepEqual(
        new Map(
          [...followers.profiles.latest].filter(([, v]) => v !== null).map(([k, v]) => [k, v!.toString()]),
        ),
        expectedProfiles,
      );
      assert.deepEqual(
        new Map([...followers.signups.latest].map(([k, v]) => [k, v!.toString()])),
        expectedSignups,
      );

      const [config] = await admin.describeConfigs([
        {
          type: 'topic',
          name: 'joins-ad-join-this-join-store-changelog',
          keys: ['cleanup.policy', 'retention.ms'],
        },
      ]);
      assert.equal(config!.error, null);
      const values = new Map(config!.configs.map((c) => [c.name, c.value]));
      assert.equal(values.get('cleanup.policy'), 'delete');
      assert.equal(values.get('retention.ms'), String(2 * WINDOW_MS + GRACE_MS + 86_400_000));
      const [repartition] = await admin.describeTopics(['joins-signups-by-user-repartition']);
      assert.equal(repartition!.partitions.length, 3);
      const globalStore = [...topology().stores.keys()].find((n) => n.startsWith('regions-'))!;
      assert.match(globalStore, /^regions-STATE-STORE-\d{10}$/);
      const all = (await admin.describeTopics()).map((d) => d.topic);
      assert.ok(all.includes('joins-ad-join-other-join-store-changelog'), all.join(' '));
      assert.ok(
        !all.some((t) => t.includes(globalStore)),
        `a global store has no changelog: ${all.join(' ')}`,
      );
    } finally {
      await streams.close();
      for (const f of Object.values(followers)) await f.stop();
      await producer.close();
      await admin.close();
    }
  });
});
