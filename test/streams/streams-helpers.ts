// Helpers of the streams tests that run through a broker: seeded input, a reader that follows a topic's
// latest value per key, temporary state directories, and one broker with its topics for a file of tests.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { decodeAssignment, decodeSubscription } from '../../src/protocol/consumer-protocol/index.js';
import { ApiKey } from '../../src/protocol/registry.js';
import {
  CloseOptions,
  Consumed,
  type KafkaStreams,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
  type Topology,
} from '../../src/streams/index.js';
import { decodeAssignmentInfoBytes } from '../../src/streams/runtime/assignment-info.js';
import { subscriptionVersions } from '../../src/streams/runtime/subscription-info.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';

/** The count per key the fault tests run: String keys and values from `input`, Long counts to `output`. */
/**
 * Close options for an instance that another instance replaces or takes over from: its members leave the group at
 * once (Kafka's CloseOptions.leaveGroup(true)), where by Kafka Streams' default the group would wait out their
 * sessions before rebalancing.
 */
export function leavingGroup(): CloseOptions {
  return new CloseOptions().leaveGroup(true);
}

export function countByKeyTopology(input: string, output: string, store: string): Topology {
  const builder = new StreamsBuilder();
  builder
    .stream(input, Consumed.with(Serdes.String(), Serdes.String()))
    .groupByKey()
    .count(Materialized.as(store))
    .toStream()
    .to(output, Produced.with(Serdes.String(), Serdes.Long()));
  return builder.build();
}

/**
 * Every Long count of `topic` committed so far, read from the beginning with read_committed up to the end offsets
 * of the moment: key -> its counts in order (exactly-once tests expect 1, 2, ..., n per key).
 */
export async function committedCounts(
  bootstrap: string,
  topic: string,
  partitions: number,
): Promise<Map<string, number[]>> {
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    autoOffsetReset: 'earliest',
    isolationLevel: 'read_committed',
  });
  try {
    const tps = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    consumer.assign(tps);
    const ends = await consumer.endOffsets(tps);
    const counts = new Map<string, number[]>();
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
      let caughtUp = true;
      for (const e of ends) if ((await consumer.position(e)) < e.offset) caughtUp = false;
      if (caughtUp) break;
      for (const r of await consumer.poll(100)) {
        const key = r.key!.toString('utf8');
        let list = counts.get(key);
        if (list === undefined) counts.set(key, (list = []));
        list.push(Number(r.value!.readBigInt64BE(0)));
      }
    }
    return counts;
  } finally {
    await consumer.close();
  }
}

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function stateDir(): string {
  return mkdtempSync(join(tmpdir(), 'brook-streams-state-'));
}

/** The ids of the active tasks an instance's threads run, sorted. */
export function activeTasks(streams: KafkaStreams): string[] {
  return streams
    .metadataForLocalThreads()
    .flatMap((t) => t.activeTasks)
    .sort();
}

/** Each instance's state, tasks and record counters, one line each: the failure message of the two-instance tests. */
export function describeInstances(...instances: KafkaStreams[]): string {
  return instances
    .map(
      (s, i) =>
        `${'abcdefgh'[i]}: ${s.state()} active ${activeTasks(s).join(',')} standby ${s.standbyTaskIds().join(',')} processed ${s.processedRecords()} standby records ${s.standbyRecords()} restored ${s.restoredRecords()}`,
    )
    .join('\n');
}

/** The end offset of one changelog partition, read with a throw-away consumer. */
export async function changelogEnd(bootstrap: string, changelog: string, partition: number): Promise<number> {
  const consumer = new Consumer({ bootstrapServers: bootstrap });
  try {
    const [e] = await consumer.endOffsets([{ topic: changelog, partition }]);
    return e!.offset;
  } finally {
    await consumer.close();
  }
}

/**
 * The standby hand-over the standby tests check: waits until `active`'s changelog partition holds `expected`
 * records (its commits have them all) and `standby` has applied them, closes `active`, waits until `standby` runs
 * both tasks, and returns how many changelog records `standby` restored meanwhile (few when its standby state was
 * handed over, all `expected` when it replayed the changelog).
 */
export async function closeActiveOverStandby(
  bootstrap: string,
  changelog: string,
  partition: number,
  expected: number,
  active: KafkaStreams,
  standby: KafkaStreams,
): Promise<number> {
  let end = 0;
  for (const deadline = Date.now() + 60_000; end < expected && Date.now() < deadline; ) {
    end = await changelogEnd(bootstrap, changelog, partition);
    if (end < expected) await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(end, expected, "the active's changelog partition holds an update per input record");
  await waitUntil(
    () => standby.standbyRecords() >= end,
    60_000,
    () => `standby applied ${standby.standbyRecords()} of ${end}\n${describeInstances(active, standby)}`,
  );
  const restoredBefore = standby.restoredRecords();
  await active.close(leavingGroup());
  await waitUntil(
    () => standby.state() === 'RUNNING' && activeTasks(standby).length === 2,
    60_000,
    () => describeInstances(active, standby),
  );
  return standby.restoredRecords() - restoredBefore;
}

export interface StreamsBroker {
  /** The broker's bootstrap address (after the before hook). */
  readonly bootstrap: string;
  /** State directories, one per instance the file starts. */
  readonly dirs: string[];
}

/**
 * One broker for a file of streams tests, without the initial rebalance delay (groups form at once), with the
 * topics and partition counts given, and `stateDirs` state directories; made before the file's tests and removed
 * after them, whatever happened.
 */
export function useStreamsBroker(topics: Record<string, number>, stateDirs: number): StreamsBroker {
  let broker: BrokerProcess | undefined;
  const dirs = Array.from({ length: stateDirs }, () => stateDir());
  before(async () => {
    broker = await startBroker({ overrides: { 'group.initial.rebalance.delay.ms': 0 } });
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    try {
      for (const [topic, numPartitions] of Object.entries(topics)) {
        const [r] = await admin.createTopics([{ topic, numPartitions, replicationFactor: 1 }]);
        assert.equal(r!.error, null);
      }
    } finally {
      await admin.close();
    }
  });
  after(async () => {
    await broker?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    get bootstrap() {
      assert.ok(broker, 'the broker is started by the before hook');
      return broker.bootstrap;
    },
    dirs,
  };
}

/** An application's config against `bootstrap` committing every 100 ms, with `extra` on top. */
export function appConfig(
  bootstrap: string,
  app: string,
  dir: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    'application.id': app,
    'bootstrap.servers': bootstrap,
    'state.dir': dir,
    'commit.interval.ms': 100,
    ...extra,
  };
}

/** Sends `values` under the key `k`, timestamps from `timestamp` up by one, each with the headers `headers` gives. */
export async function produceValues(
  bootstrap: string,
  topic: string,
  values: string[],
  timestamp: number,
  headers: (value: string) => Record<string, string> | undefined = () => undefined,
): Promise<void> {
  const producer = new Producer({ bootstrapServers: bootstrap });
  try {
    await producer.sendBatch(
      values.map((v, i) => ({
        topic,
        key: Buffer.from('k'),
        value: Buffer.from(v),
        timestamp: timestamp + i,
        headers: headers(v),
      })),
    );
  } finally {
    await producer.close();
  }
}

/** Reads a topic from the beginning on all partitions (no group), keeping every record and the last per key. */
export class TopicFollower {
  readonly latest = new Map<string, Buffer | null>();
  readonly records: { key: string; value: Buffer | null; partition: number; offset: number }[] = [];
  private readonly consumer: Consumer;
  private running = true;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    bootstrap: string,
    private readonly topic: string,
    private readonly partitions: number,
  ) {
    // Followed topics may be the application's internal ones: created by it, with their partition counts.
    this.consumer = new Consumer({
      bootstrapServers: bootstrap,
      autoOffsetReset: 'earliest',
      allowAutoCreateTopics: false,
    });
  }

  start(): void {
    this.consumer.assign(
      Array.from({ length: this.partitions }, (_, partition) => ({ topic: this.topic, partition })),
    );
    this.loop = (async () => {
      while (this.running) {
        for (const r of await this.consumer.poll(100)) {
          const key = r.key?.toString('utf8') ?? '';
          this.latest.set(key, r.value);
          this.records.push({ key, value: r.value, partition: r.partition, offset: r.offset });
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop.catch(() => {});
    await this.consumer.close();
  }
}

/** One member of a streams group as the coordinator stores it (DescribeGroups): its user data, in brief. */
export interface StreamsMemberView {
  subscription: { version: number; latestSupportedVersion: number } | null;
  /** Partitions the member's subscription says it owns. */
  owned: number;
  /** The client's process id (hex), from the subscription's user data. */
  processId: string | null;
  assignment: { version: number; common: number; active: string[] } | null;
}
export type StreamsGroupView = { state: string; members: StreamsMemberView[] };

/** The group `app` as the coordinator stores it: state, each member's user data versions, owned partitions, tasks. */
export async function describeStreamsGroup(bootstrap: string, app: string): Promise<StreamsGroupView> {
  const [host, port] = bootstrap.split(':') as [string, string];
  const client = await WireClient.connect(host, Number(port));
  try {
    const res = await client.call(ApiKey.DESCRIBE_GROUPS, 0, {
      groups: [app],
      includeAuthorizedOperations: false,
    });
    const g = res.groups[0];
    return {
      state: g.groupState,
      members: g.members.map((m: { memberMetadata: Buffer; memberAssignment: Buffer }): StreamsMemberView => {
        const sub = m.memberMetadata.length > 0 ? decodeSubscription(m.memberMetadata).value : null;
        const asg =
          m.memberAssignment.length > 0 ? decodeAssignment(m.memberAssignment).value.userData : null;
        const info = asg === null ? null : decodeAssignmentInfoBytes(asg);
        const userData = sub?.userData ?? null;
        return {
          subscription: userData === null ? null : subscriptionVersions(userData),
          owned: sub === null ? 0 : sub.ownedPartitions.reduce((n, t) => n + t.partitions.length, 0),
          // The process id follows the version (4 bytes) and, from version 3, the latest supported version.
          processId:
            userData === null
              ? null
              : userData
                  .subarray(userData.readInt32BE(0) >= 3 ? 8 : 4)
                  .subarray(0, 16)
                  .toString('hex'),
          assignment:
            info === null
              ? null
              : { version: info.version, common: info.commonlySupportedVersion!, active: info.activeTasks },
        };
      }),
    };
  } finally {
    client.close();
  }
}

/** Polls the group until `ok` holds (a describe call each time), or fails with the last view and `why()`. */
export async function waitForStreamsGroup(
  bootstrap: string,
  app: string,
  ok: (v: StreamsGroupView) => boolean,
  why: () => string,
): Promise<StreamsGroupView> {
  let last: StreamsGroupView | null = null;
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; await sleep(250)) {
    last = await describeStreamsGroup(bootstrap, app);
    if (ok(last)) return last;
  }
  assert.fail(`group never settled: ${JSON.stringify(last)}\n${why()}`);
}

/** Every active task of the group's assignments, sorted. */
export const groupActiveTasks = (v: StreamsGroupView): string[] =>
  v.members.flatMap((m) => m.assignment?.active ?? []).sort();
