// Session and sliding window counts through a broker, against references computed here from the same input:
// sessions are the runs of a key's records no further apart than the gap; sliding windows are the windows
// ending at each record and the non-empty ones just after each record. Input arrives out of order across the
// two partitions (a key stays on one), with a grace period covering the whole input,
// so nothing is dropped and the final value per window is order-independent.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import {
  Consumed,
  KafkaStreams,
  KeyValue,
  Produced,
  Serdes,
  SessionWindows,
  SlidingWindows,
  StreamsBuilder,
} from '../../src/streams/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitUntil } from '../helpers/wait.js';
import { seeded, stateDir, TopicFollower } from './streams-helpers.js';

const S = Serdes.String();
const GAP_MS = 30;
const DIFF_MS = 40;
const GRACE_MS = 1_000_000;

function topology() {
  const builder = new StreamsBuilder();
  const grouped = builder.stream('activity', Consumed.with(S, S)).groupByKey();
  grouped
    .windowedBy(SessionWindows.ofInactivityGapAndGrace(GAP_MS, GRACE_MS))
    .count()
    .toStream()
    .map((w, c) => KeyValue.pair(`${w.key}@${w.window.start()}-${w.window.end()}`, c))
    .to('session-counts', Produced.with(S, Serdes.Long()));
  grouped
    .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(DIFF_MS, GRACE_MS))
    .count()
    .toStream()
    .map((w, c) => KeyValue.pair(`${w.key}@${w.window.start()}-${w.window.end()}`, c))
    .to('sliding-counts', Produced.with(S, Serdes.Long()));
  return builder.build();
}

function sessionsOf(times: number[]): [number, number, number][] {
  const sorted = [...times].sort((a, b) => a - b);
  const out: [number, number, number][] = [];
  for (const t of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && t - last[1] <= GAP_MS) {
      last[1] = t;
      last[2]++;
    } else out.push([t, t, 1]);
  }
  return out;
}

function slidingOf(times: number[]): Map<string, number> {
  const out = new Map<string, number>();
  const count = (s: number) => times.filter((t) => t >= s && t <= s + DIFF_MS).length;
  for (const t of times) {
    const s = Math.max(0, t - DIFF_MS);
    out.set(`${s}-${s + DIFF_MS}`, count(s));
    if (times.some((u) => u > t && u <= t + 1 + DIFF_MS))
      out.set(`${t + 1}-${t + 1 + DIFF_MS}`, count(t + 1));
  }
  return out;
}

describe('session and sliding windows through a broker', () => {
  let broker: BrokerProcess;
  let bootstrap = '';
  const dir = stateDir();

  before(async () => {
    broker = await startBroker();
    bootstrap = broker.bootstrap;
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([
      { topic: 'activity', numPartitions: 2, replicationFactor: 1 },
      { topic: 'session-counts', numPartitions: 1, replicationFactor: 1 },
      { topic: 'sliding-counts', numPartitions: 1, replicationFactor: 1 },
    ]);
    await admin.close();
  });

  after(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('session and sliding counts match the references', async () => {
    const random = seeded(33);
    const users = ['ann', 'bob', 'cid', 'dee', 'eve'];
    const input = Array.from({ length: 200 }, () => ({
      user: users[Math.floor(random() * users.length)]!,
      timestamp: Math.floor(random() * 3000),
    }));
    const expectedSessions = new Map<string, number>();
    const expectedSliding = new Map<string, number>();
    for (const u of users) {
      const times = input.filter((i) => i.user === u).map((i) => i.timestamp);
      for (const [s, e, n] of sessionsOf(times)) expectedSessions.set(`${u}@${s}-${e}`, n);
      for (const [w, n] of slidingOf(times)) expectedSliding.set(`${u}@${w}`, n);
    }
    const producer = new Producer({ bootstrapServers: bootstrap });
    const streams = new KafkaStreams(topology(), {
      'application.id': 'windows',
      'bootstrap.servers': bootstrap,
      'commit.interval.ms': 100,
      'state.dir': dir,
    });
    const sessions = new TopicFollower(bootstrap, 'session-counts', 1);
    const sliding = new TopicFollower(bootstrap, 'sliding-counts', 1);
    sessions.start();
    sliding.start();
    const final = (f: TopicFollower) =>
      new Map(
        [...f.latest]
          .filter(([, v]) => v !== null)
          .map(([k, v]) => [k, Number(v!.readBigInt64BE(0))] as const)
          .sort(),
      );
    try {
      await streams.start();
      await producer.sendBatch(
        input.map((i) => ({
          topic: 'activity',
          key: Buffer.from(i.user),
          value: Buffer.from('x'),
          timestamp: i.timestamp,
        })),
      );
      await waitUntil(
        () => streams.processedRecords() >= input.length,
        60_000,
        () => `processed ${streams.processedRecords()} of ${input.length}`,
      );
      const sortedSessions = new Map([...expectedSessions].sort());
      const sortedSliding = new Map([...expectedSliding].sort());
      await waitUntil(
        () =>
          JSON.stringify([...final(sessions)]) === JSON.stringify([...sortedSessions]) &&
          JSON.stringify([...final(sliding)]) === JSON.stringify([...sortedSliding]),
        30_000,
        () =>
          `${final(sessions).size} of ${sortedSessions.size} sessions, ${final(sliding).size} of ${sortedSliding.size} windows`,
      );
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(final(sessions), sortedSessions);
      assert.deepEqual(final(sliding), sortedSliding);
    } finally {
      await streams.close();
      await sessions.stop();
      await sliding.stop();
      await producer.close();
    }
  });
});
