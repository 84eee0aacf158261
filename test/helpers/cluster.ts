// Helpers for tests of several broker processes: what a broker's metadata says about a partition and the
// controller, and polling until a condition holds.

import type { Admin, TopicDescription } from '../../src/client/admin.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from './broker-process.js';
import { FetchError, type ReadPartitionOptions, readPartition, WireClient } from './wire-client.js';

export interface PartitionView {
  leaderId: number;
  leaderEpoch: number;
  replicaNodes: number[];
  isrNodes: number[];
  offlineReplicas: number[];
}

/** Where a broker listens: a broker process or one in this process (test/helpers/in-process-broker.ts). */
export type BrokerAddress = Pick<BrokerProcess, 'host' | 'port'>;

async function metadata(broker: BrokerAddress, topics: string[]) {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    return await client.call(ApiKey.METADATA, 9, {
      topics: topics.map((name) => ({ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name })),
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
  } finally {
    client.close();
  }
}

/** Partition 0 of `topic` as `broker`'s metadata cache sees it. */
export async function partitionView(
  broker: BrokerAddress,
  topic: string,
): Promise<PartitionView | undefined> {
  return (await metadata(broker, [topic])).topics[0]?.partitions[0];
}

/** Ids of the brokers `broker` knows to be alive. */
export async function liveBrokers(broker: BrokerAddress): Promise<number[]> {
  return (await metadata(broker, [])).brokers.map((b: { nodeId: number }) => b.nodeId).sort();
}

export async function controllerOf(broker: BrokerAddress): Promise<number> {
  return (await metadata(broker, [])).controllerId;
}

/** Waits until every broker names the same controller and knows all the others alive; answers its id. */
export function agreedController(brokers: readonly BrokerAddress[], timeoutMs = 20_000): Promise<number> {
  return waitFor(
    'every broker to know the controller and its peers',
    async () => {
      const ids = await Promise.all(brokers.map((b) => controllerOf(b)));
      const peers = await Promise.all(brokers.map((b) => liveBrokers(b)));
      const agreed = ids[0]! >= 0 && ids.every((id) => id === ids[0]);
      return agreed && peers.every((p) => p.length === brokers.length) ? ids[0] : undefined;
    },
    timeoutMs,
  );
}

/**
 * Waits until every one of `brokers` names the same leader of partition 0 of `topic` with the same epoch, one
 * that `accept`s the view, and the leader is among `brokers`; answers the leader's own view. One broker's metadata
 * names a new leader before the leader itself has been told (the controller tells brokers one at a time), and a
 * write sent then is answered NOT_LEADER_OR_FOLLOWER.
 */
export function agreedLeader(
  brokers: readonly BrokerProcess[],
  topic: string,
  accept: (view: PartitionView) => boolean = () => true,
  timeoutMs = 20_000,
): Promise<PartitionView> {
  return waitFor(
    `every broker to name the same leader of ${topic}`,
    async () => {
      const views = await Promise.all(brokers.map((b) => partitionView(b, topic)));
      const [first] = views;
      if (first === undefined || first.leaderId < 0 || !accept(first)) return undefined;
      const agreed = views.every(
        (v) => v?.leaderId === first.leaderId && v.leaderEpoch === first.leaderEpoch,
      );
      const leaderIsAsked = brokers.some((b) => b.brokerId === first.leaderId);
      return agreed && leaderIsAsked ? first : undefined;
    },
    timeoutMs,
  );
}

/** Polls `probe` until it answers something other than undefined (errors count as undefined). */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Waits until the broker `admin` asks lists all `partitionCount` partitions of `topic`, each with `isrSize` in-sync
 * replicas, and answers them. CreateTopics answers once the broker that took it knows the topic; another broker may
 * not yet, and its empty partition list would satisfy an `every` check on its own.
 */
export function waitForInSync(
  admin: Admin,
  topic: string,
  partitionCount: number,
  isrSize: number,
  timeoutMs = 20_000,
): Promise<TopicDescription['partitions']> {
  return waitFor(
    `every partition of ${topic} with ${isrSize} in-sync replicas`,
    async () => {
      const [t] = await admin.describeTopics([topic]);
      const ps = t?.partitions ?? [];
      return ps.length === partitionCount && ps.every((p) => p.isr.length === isrSize) ? ps : undefined;
    },
    timeoutMs,
  );
}

/** Produces each value as its own acks=all batch to partition 0, one at a time; answers each error code. */
export async function produceValues(
  broker: BrokerProcess,
  topic: string,
  values: readonly string[],
): Promise<number[]> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const codes: number[] = [];
    for (const value of values) {
      const response = await client.call(
        ApiKey.PRODUCE,
        9,
        {
          transactionalId: null,
          acks: -1,
          timeoutMs: 15_000,
          topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch([{ value }]) }] }],
        },
        20_000,
      );
      codes.push(response.responses[0].partitionResponses[0].errorCode);
    }
    return codes;
  } finally {
    client.close();
  }
}

/**
 * As produceValues, to whichever broker `brokers` agree leads `topic`; a value answered NOT_LEADER_OR_FOLLOWER is
 * sent again once they agree on a leader again, as a client does after refreshing its metadata (that error means
 * the broker appended nothing). Answers each value's last error code.
 */
export async function produceToLeader(
  brokers: readonly BrokerProcess[],
  topic: string,
  values: readonly string[],
  timeoutMs = 20_000,
): Promise<number[]> {
  const codes: number[] = [];
  for (const value of values) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const view = await agreedLeader(brokers, topic, () => true, timeoutMs);
      const leader = brokers.find((b) => b.brokerId === view.leaderId)!;
      const [code] = await produceValues(leader, topic, [value]);
      if (code !== ErrorCode.NOT_LEADER_OR_FOLLOWER || Date.now() > deadline) {
        codes.push(code!);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return codes;
}

/**
 * readPartition from `broker`, again while it answers NOT_LEADER_OR_FOLLOWER: a broker named leader by the
 * controller's metadata may not have been told yet itself. `read` is passed on (untilOffset: the records the
 * caller knows were acknowledged, which a new leader's high watermark may not cover yet).
 */
export async function readWhenLeading(
  broker: BrokerAddress,
  topic: string,
  timeoutMs = 20_000,
  read: ReadPartitionOptions = {},
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      return await readPartition(client, topic, 0, 0, read);
    } catch (e) {
      const notYet = e instanceof FetchError && e.code === ErrorCode.NOT_LEADER_OR_FOLLOWER;
      if (!notYet || Date.now() > deadline) throw e;
    } finally {
      client.close();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
