// The task offset sums an instance sends in its subscription (SubscriptionInfo, read back from the coordinator
// with DescribeGroups), through a broker. As Kafka's TaskManager.taskOffsetSums, a sum is the changelog offsets
// the task's stores hold added up: each the offset of the last record the store has (ProcessorStateManager's
// changelog offsets, which its checkpoint file holds as they are), never the next one. A checkpoint on disk and a
// running standby, in memory or persistent, give the same sum for the same state; the leader's lag is the end
// offset sum minus it (one per changelog partition for a task that is caught up, as in Kafka).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { decodeSubscription } from '../../src/protocol/consumer-protocol/index.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { Consumed, KafkaStreams, Materialized, Serdes, StreamsBuilder } from '../../src/streams/index.js';
import { decodeSubscriptionInfoBytes } from '../../src/streams/runtime/subscription-info.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';
import {
  activeTasks,
  changelogEnd,
  describeInstances,
  leavingGroup,
  useStreamsBroker,
} from './streams-helpers.js';

const S = Serdes.String();
type SubscriptionInfo = NonNullable<ReturnType<typeof decodeSubscriptionInfoBytes>>;
const env = useStreamsBroker({ 'tos-persistent-in': 1, 'tos-sb-memory-in': 1, 'tos-sb-persistent-in': 1 }, 3);

function instance(app: string, dir: string, inMemory: boolean): KafkaStreams {
  const builder = new StreamsBuilder();
  builder
    .stream(`${app}-in`, Consumed.with(S, S))
    .groupByKey()
    .count(inMemory ? Materialized.inMemory('counts') : Materialized.as('counts'));
  return new KafkaStreams(builder.build(), {
    'application.id': app,
    'bootstrap.servers': env.bootstrap,
    'state.dir': dir,
    'num.standby.replicas': 1,
    'commit.interval.ms': 100,
    // One changelog record per input record.
    'statestore.cache.max.bytes': 0,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
  });
}

/** Each member's SubscriptionInfo as the coordinator stores it. */
async function subscriptions(app: string): Promise<SubscriptionInfo[]> {
  const [host, port] = env.bootstrap.split(':') as [string, string];
  const client = await WireClient.connect(host, Number(port));
  try {
    const res = await client.call(ApiKey.DESCRIBE_GROUPS, 0, {
      groups: [app],
      includeAuthorizedOperations: false,
    });
    const out: SubscriptionInfo[] = [];
    for (const m of res.groups[0].members as { memberMetadata: Buffer }[]) {
      const userData =
        m.memberMetadata.length === 0 ? null : decodeSubscription(m.memberMetadata).value.userData;
      const info = userData === null ? null : decodeSubscriptionInfoBytes(userData);
      if (info !== null) out.push(info);
    }
    return out;
  } finally {
    client.close();
  }
}

/** Waits until `members` members subscribed and one reports a sum for task 0_0, and returns it. */
async function reportedSum(app: string, members: number, why: () => string): Promise<number> {
  let last: SubscriptionInfo[] = [];
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250)) {
    last = await subscriptions(app);
    const sum = last.map((s) => s.taskOffsetSums['0_0']).find((s) => s !== undefined);
    if (last.length === members && sum !== undefined) return sum;
  }
  assert.fail(`no subscription reported a sum for 0_0: ${JSON.stringify(last)}\n${why()}`);
}

async function countThree(app: string): Promise<number> {
  const producer = new Producer({ bootstrapServers: env.bootstrap });
  try {
    for (const k of ['a', 'b', 'a'])
      await producer.send({ topic: `${app}-in`, key: Buffer.from(k), value: Buffer.from('v') });
  } finally {
    await producer.close();
  }
  let end = 0;
  for (const deadline = Date.now() + 30_000; end < 3 && Date.now() < deadline; await sleep(100))
    end = await changelogEnd(env.bootstrap, `${app}-counts-changelog`, 0);
  assert.equal(end, 3, 'one changelog record per input record');
  return end;
}

describe('task offset sums in the subscription', () => {
  it("a checkpoint's sum is its offsets as they are: the last changelog offset held, not the next", async () => {
    const app = 'tos-persistent';
    const dir = env.dirs[2]!;
    let a = instance(app, dir, false);
    try {
      await a.start();
      await waitUntil(
        () => a.state() === 'RUNNING' && activeTasks(a).join() === '0_0',
        30_000,
        () => describeInstances(a),
      );
      const end = await countThree(app);
      await a.close(leavingGroup());
      // Restarted on its state directory: the first subscription reads the task's sum from its checkpoint.
      a = instance(app, dir, false);
      await a.start();
      const sum = await reportedSum(app, 1, () => describeInstances(a));
      assert.equal(sum, end - 1, 'the checkpoint holds offset 2 (the last of 0, 1, 2): Kafka sends 2');
    } finally {
      await a.close();
    }
  });

  for (const inMemory of [true, false])
    it(`a caught-up ${inMemory ? 'in-memory' : 'persistent'} standby reports the last offset it holds`, async () => {
      const app = inMemory ? 'tos-sb-memory' : 'tos-sb-persistent';
      const a = instance(app, env.dirs[0]!, inMemory);
      const b = instance(app, env.dirs[1]!, inMemory);
      let c: KafkaStreams | null = null;
      try {
        await a.start();
        await b.start();
        // Either may run the task (neither has state yet); the other keeps its standby.
        const standby = () => [a, b].find((s) => s.standbyTaskIds().join() === '0_0');
        await waitUntil(
          () =>
            a.state() === 'RUNNING' &&
            b.state() === 'RUNNING' &&
            [...activeTasks(a), ...activeTasks(b)].join() === '0_0' &&
            standby() !== undefined,
          60_000,
          () => describeInstances(a, b),
        );
        const end = await countThree(app);
        await waitUntil(
          () => (standby()?.standbyRecords() ?? 0) >= end,
          30_000,
          () => describeInstances(a, b),
        );
        // A third instance joins: the standby's instance subscribes again, with its caught-up standby's sum.
        c = instance(app, env.dirs[2]!, inMemory);
        await c.start();
        const sum = await reportedSum(app, 3, () => describeInstances(a, b, c!));
        assert.equal(sum, end - 1, "the standby holds offsets 0 to 2: Kafka's sum is 2, its lag 1");
      } finally {
        await c?.close();
        await b.close();
        await a.close();
      }
    });
});
