// Two brokers in this process on a throwaway ZooKeeper, for tests that need acks=all refused with
// NOT_ENOUGH_REPLICAS. A single broker cannot give that since min.insync.replicas is capped at the replicas
// assigned (Kafka 3.7+, KAFKA-15583): the refusal needs a partition whose ISR is smaller than its replica set.
//
// Broker 0 starts first and runs the controller; the topics asked for are created with partition 0 on replicas
// [0, 1], so broker 0 leads them; then broker 1 stops (a controlled shutdown: the controller takes it out of every
// ISR) and stays stopped, leaving each such partition with broker 0 alone in its ISR. Topics created afterwards
// have broker 0 as their only live broker. stop() stops broker 0 and ZooKeeper and removes their directories,
// whatever failed before.

import { controllerOf, partitionView, waitFor } from './cluster.js';
import { type InProcessBroker, startInProcessBroker } from './in-process-broker.js';
import { createTopic, WireClient } from './wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from './zookeeper.js';

export interface ShortIsrCluster {
  /** Broker 0: the controller, and the leader of the topics created on [0, 1], with itself alone in their ISR. */
  readonly leader: InProcessBroker;
  /** host:port of broker 0. */
  readonly bootstrap: string;
  stop(): Promise<void>;
}

/** Starts the cluster with `topics` (name to topic configs) on replicas [0, 1], broker 1 stopped. */
export async function startShortIsrCluster(
  topics: Record<string, Record<string, string>>,
): Promise<ShortIsrCluster> {
  const brokers: InProcessBroker[] = [];
  let zk: TestZooKeeper | undefined;
  const stop = async (): Promise<void> => {
    try {
      for (const b of brokers.reverse()) await b.stop();
    } finally {
      await zk?.stop();
    }
  };
  try {
    zk = await startTestZooKeeper();
    const start = async (id: number): Promise<InProcessBroker> => {
      const broker = await startInProcessBroker({
        'broker.id': id,
        'zookeeper.connect': zk!.connect,
        'replica.fetch.wait.max.ms': 100,
        // The last broker to stop has nowhere to move its leaders: do not wait 3 x 5 s for that.
        'controlled.shutdown.retry.backoff.ms': 200,
      });
      brokers.push(broker);
      return broker;
    };
    const leader = await start(0);
    await waitFor('broker 0 to run the controller', async () =>
      (await controllerOf(leader)) === 0 ? true : undefined,
    );
    const follower = await start(1);
    const admin = await WireClient.connect(leader.host, leader.port);
    try {
      for (const [name, configs] of Object.entries(topics))
        await createTopic(admin, name, { assignments: { 0: [0, 1] }, configs });
    } finally {
      admin.close();
    }
    await follower.stop();
    for (const name of Object.keys(topics)) {
      await waitFor(`broker 0 leading ${name} alone in its ISR`, async () => {
        const v = await partitionView(leader, name);
        return v?.leaderId === 0 && v.isrNodes.length === 1 && v.replicaNodes.length === 2 ? v : undefined;
      });
    }
    return { leader, bootstrap: `${leader.host}:${leader.port}`, stop };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}
