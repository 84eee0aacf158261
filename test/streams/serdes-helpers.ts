// Helpers of the tests that check which serde wrote the bytes of a topic (repartition topics, changelogs, outputs)
// through a broker: a key serde whose bytes betray it, a runner that starts a topology and follows its topics, and
// a reader that shows the followed records as their raw bytes.

import { Producer } from '../../src/client/producer.js';
import {
  KafkaStreams,
  type Serde,
  Serdes,
  type StreamsBuilder,
  type StreamsProperties,
} from '../../src/streams/index.js';
import { type StreamsBroker, TopicFollower } from './streams-helpers.js';

/** A key serde unlike String's: `tag:` before the UTF-8 text, so its bytes betray which serde wrote a key. */
export const TAGGED: Serde<string> = {
  serialize: (_topic, data) => (data === null ? null : Buffer.from(`tag:${data}`)),
  deserialize: (_topic, data) => (data === null ? null : data.toString('utf8').replace(/^tag:/, '')),
};

export type FollowedRecord = TopicFollower['records'][number];

/** A record as its bytes read: `key=value`, both as UTF-8 text (`null` for a tombstone's value). */
export function rawRecord(r: FollowedRecord): string {
  return `${r.key}=${r.value === null ? 'null' : r.value.toString('utf8')}`;
}

/** `label: r1,r2; label: ...` for each followed topic, its records shown by `show` in the order read. */
export function readFollowed(
  followed: ReadonlyMap<string, TopicFollower>,
  show: (r: FollowedRecord) => string = rawRecord,
): string {
  return [...followed].map(([label, f]) => `${label}: ${f.records.map(show)}`).join('; ');
}

export interface TopologyRun {
  producer: Producer;
  streams: KafkaStreams;
  /** The followed topics by label, in the order given. */
  followed: ReadonlyMap<string, TopicFollower>;
}

/**
 * Runs `builder`'s topology as application `app` on the file's broker, with String default serdes and a commit
 * every 100 ms unless `props` says otherwise, follows `topics` (label -> [topic, partitions]) from their start,
 * and hands them to `body`. The followers, the instance and the producer are stopped afterwards, whatever
 * happened.
 */
export async function runTopology(
  env: StreamsBroker,
  app: string,
  builder: StreamsBuilder,
  topics: Readonly<Record<string, readonly [topic: string, partitions: number]>>,
  body: (run: TopologyRun) => Promise<void>,
  props: StreamsProperties = {},
): Promise<void> {
  const streams = new KafkaStreams(builder.build(), {
    'application.id': app,
    'bootstrap.servers': env.bootstrap,
    'state.dir': env.dirs[0]!,
    'commit.interval.ms': 100,
    'default.key.serde': Serdes.String(),
    'default.value.serde': Serdes.String(),
    ...props,
  });
  const producer = new Producer({ bootstrapServers: env.bootstrap });
  const followed = new Map(
    Object.entries(topics).map(([label, [topic, partitions]]) => [
      label,
      new TopicFollower(env.bootstrap, topic, partitions),
    ]),
  );
  try {
    await streams.start();
    for (const f of followed.values()) f.start();
    await body({ producer, streams, followed });
  } finally {
    for (const f of followed.values()) await f.stop();
    await streams.close();
    await producer.close();
  }
}
