// A follower that fell out of the ISR rejoins it while producers keep writing, as in Kafka: once the follower is
// caught up (it reached the leader's end within replica.lag.time.max.ms), the leader's high watermark waits for it
// as for an ISR member (Kafka's Partition.maybeIncrementLeaderHW), so its log end is at the high watermark and the
// next ISR check adds it. Without that, the high watermark ran ahead with every write, the follower's last fetch
// was nearly always behind it, and a follower with some distance to the leader stayed out of the ISR for as long
// as the writes went on: acks=all writes acknowledged by the leader alone, and a rolling restart waiting for no
// under-replicated partitions waited forever.
//
// Two brokers in this process share a ZooKeeper: 0 runs the controller and leads, 1 follows. Broker 0's request
// interceptor holds broker 1's fetches until it leaves the ISR, then handles each only after FOLLOWER_DELAY_MS,
// the distance of a follower in another region, while a client keeps acks=1 produce requests in flight.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { FetchRequest } from '../../src/protocol/messages/01-fetch.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, onKey, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper } from '../helpers/zookeeper.js';

const TOPIC = 'isr-rejoin';
const LAG_TIME_MAX_MS = 1000;
const FOLLOWER_DELAY_MS = 200;
/** Produce requests the load keeps in flight: enough that a write is always on its way to the leader. */
const IN_FLIGHT = 8;

/** Partition 0's ISR as `broker`'s metadata gives it. */
async function isrOf(broker: InProcessBroker): Promise<number[] | undefined> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const response = await client.call(ApiKey.METADATA, 9, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: TOPIC }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    return response.topics[0]?.partitions[0]?.isrNodes;
  } finally {
    client.close();
  }
}

/**
 * Keeps IN_FLIGHT acks=1 produce requests of one small batch each in flight on `leader` until stop() is called;
 * answered() is the number of requests answered so far, and stop() resolves with it in the end. Each answer must
 * be a success.
 */
async function steadyLoad(leader: InProcessBroker): Promise<{ answered(): number; stop(): Promise<number> }> {
  const client = await WireClient.connect(leader.host, leader.port);
  const records = buildBatch([{ value: 'x'.repeat(100) }, { value: 'y'.repeat(100) }]);
  const body = {
    transactionalId: null,
    acks: 1,
    timeoutMs: 5000,
    topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }],
  };
  let stopping = false;
  let answered = 0;
  const run = (async () => {
    let inFlight = 0;
    for (; inFlight < IN_FLIGHT; inFlight++) client.send(ApiKey.PRODUCE, 9, body);
    while (inFlight > 0) {
      const response = await client.receive();
      inFlight--;
      assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
      answered++;
      if (!stopping) {
        client.send(ApiKey.PRODUCE, 9, body);
        inFlight++;
      }
    }
  })();
  return {
    answered: () => answered,
    async stop() {
      stopping = true;
      try {
        await run;
      } finally {
        client.close();
      }
      return answered;
    },
  };
}

it('a follower out of the ISR rejoins it while the writes go on', async () => {
  const zk = await startTestZooKeeper();
  const brokers: InProcessBroker[] = [];
  try {
    for (const id of [0, 1]) {
      brokers.push(
        await startInProcessBroker({
          'broker.id': id,
          'zookeeper.connect': zk.connect,
          'replica.lag.time.max.ms': LAG_TIME_MAX_MS,
          'replica.fetch.wait.max.ms': 100,
          // The last broker to stop has nowhere to move its leaders: do not wait 3 x 5 s for that.
          'controlled.shutdown.retry.backoff.ms': 200,
        }),
      );
    }
    const [leader] = brokers as [InProcessBroker, InProcessBroker];
    const admin = await WireClient.connect(leader.host, leader.port);
    try {
      await createTopic(admin, TOPIC, { assignments: { 0: [0, 1] } });
    } finally {
      admin.close();
    }
    await waitFor('both replicas in sync', async () =>
      (await isrOf(leader))?.length === 2 ? true : undefined,
    );

    // Broker 1's fetches wait at the leader until they are let go: it falls out of the ISR. Once let go, each is
    // counted as it is handled.
    let held = true;
    let followerFetches = 0;
    leader.interception.set(
      onKey<FetchRequest>(ApiKey.FETCH, async (request) => {
        if (request.body.replicaState.replicaId !== 1) return request.handle();
        while (held) await sleep(50);
        await sleep(FOLLOWER_DELAY_MS);
        followerFetches++;
        return request.handle();
      }),
    );
    await waitFor('the ISR without broker 1', async () => {
      const isr = await isrOf(leader);
      return isr !== undefined && !isr.includes(1) ? true : undefined;
    });

    const load = await steadyLoad(leader);
    let writesWhileCatchingUp = 0;
    let fetchesWhileCatchingUp = 0;
    try {
      // The follower is let go once the load is under way (its pace depends on the machine's): it has 100 writes
      // to catch up with, and more keep coming.
      await waitFor('the load writing', async () => (load.answered() > 100 ? true : undefined));
      const writesBefore = load.answered();
      held = false;
      // The leader checks the ISR every half lag time: a caught-up follower is back within a few checks.
      await waitFor(
        'broker 1 back in the ISR under load',
        async () => ((await isrOf(leader))?.includes(1) ? true : undefined),
        10 * LAG_TIME_MAX_MS,
      );
      writesWhileCatchingUp = load.answered() - writesBefore;
      fetchesWhileCatchingUp = followerFetches;
    } finally {
      await load.stop();
    }
    // What kept a follower out before: a write between any two of its fetches, so that its last fetch was always
    // behind the high watermark. Counted rather than timed, as a loaded machine slows the writes down.
    assert.ok(
      writesWhileCatchingUp >= fetchesWhileCatchingUp,
      `the load kept writing while the follower caught up (${writesWhileCatchingUp} writes, ${fetchesWhileCatchingUp} follower fetches)`,
    );
  } finally {
    for (const b of brokers.reverse()) await b.stop().catch(() => {});
    await zk.stop();
  }
});
