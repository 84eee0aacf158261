// A transaction marker answered UNKNOWN_TOPIC_OR_PARTITION by the partition's leader is written again, as Kafka's
// TransactionMarkerRequestCompletionHandler retries it: a broker that has just restarted serves requests before
// the controller's LeaderAndIsr has given it its partitions, and answers the marker so. Taking that answer for
// "the partition is gone, no marker needed" let the coordinator complete an abort without the marker in that
// partition; the fenced producer's records stayed open there, and the COMMIT marker of the next transaction of the
// same producer id took them in, so read_committed showed records of an aborted transaction (a chaos run's
// "aborted-read": a transaction fenced by its timeout, its inputs then processed again and committed).
//
// Two brokers in this process share a ZooKeeper: the transaction coordinator on one, the only replica of the
// output partition on the other, whose request interceptor answers the first WriteTxnMarkers as that restarted
// broker did (three times). The coordinator logs that answer of the remote leader once, with the transactional id.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { createLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type {
  WriteTxnMarkersRequest,
  WriteTxnMarkersResponse,
} from '../../src/protocol/messages/27-write-txn-markers.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, onKey, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper } from '../helpers/zookeeper.js';

const TOPIC = 'txn-marker-retry';
const TID = 'marker-retry-tid';

/** The answer of a broker that does not know the marker's partitions yet (no LeaderAndIsr for them). */
function unknownPartitions(request: WriteTxnMarkersRequest): WriteTxnMarkersResponse {
  return {
    markers: request.markers.map((m) => ({
      producerId: m.producerId,
      topics: m.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => ({
          partitionIndex,
          errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        })),
      })),
    })),
  };
}

const FAKED = 3;

it('a marker answered UNKNOWN_TOPIC_OR_PARTITION is retried: a fenced transaction never turns committed', async () => {
  const zk = await startTestZooKeeper();
  const brokers: InProcessBroker[] = [];
  const clients: { close(): unknown }[] = [];
  // Each broker's log lines about failed markers.
  const markerLines: string[][] = [[], []];
  try {
    for (const id of [0, 1]) {
      const lines = markerLines[id]!;
      const logger = createLogger('brook', 'info', (line) => {
        if (line.includes('marker of transaction')) lines.push(line);
      });
      brokers.push(
        await startInProcessBroker(
          {
            'broker.id': id,
            'zookeeper.connect': zk.connect,
            'transaction.state.log.num.partitions': 1,
            'transaction.state.log.replication.factor': 1,
            'transaction.state.log.min.isr': 1,
            'offsets.topic.num.partitions': 1,
          },
          { logger },
        ),
      );
    }
    const bootstrap = brokers.map((b) => `${b.host}:${b.port}`).join(',');
    const wire = await WireClient.connect(brokers[0]!.host, brokers[0]!.port);
    clients.push(wire);
    // The coordinator of TID (FindCoordinator creates __transaction_state on one of the brokers).
    const coordinator = await waitFor('the transaction coordinator', async () => {
      const r = await wire.call(ApiKey.FIND_COORDINATOR, 4, {
        key: '',
        keyType: 1,
        coordinatorKeys: [TID],
      });
      const c = r.coordinators[0];
      return c.errorCode === ErrorCode.NONE ? (c.nodeId as number) : undefined;
    });
    const leader = 1 - coordinator;
    await createTopic(wire, TOPIC, { assignments: { 0: [leader] } });

    let faked = 0;
    let written = 0;
    brokers[leader]!.interception.set(
      onKey<WriteTxnMarkersRequest>(ApiKey.WRITE_TXN_MARKERS, (request) => {
        if (faked < FAKED) {
          faked++;
          return unknownPartitions(request.body);
        }
        written++;
        return undefined;
      }),
    );

    const fenced = new Producer({ bootstrapServers: bootstrap, transactionalId: TID });
    clients.push(fenced);
    await fenced.initTransactions();
    fenced.beginTransaction();
    await fenced.send({ topic: TOPIC, partition: 0, value: Buffer.from('fenced-1') });

    // A new producer of the id fences the open transaction: the coordinator aborts it under a bumped epoch.
    const next = new Producer({ bootstrapServers: bootstrap, transactionalId: TID });
    clients.push(next);
    await next.initTransactions();
    next.beginTransaction();
    await next.send({ topic: TOPIC, partition: 0, value: Buffer.from('committed-1') });
    await next.commitTransaction();

    const consumer = new Consumer({ bootstrapServers: bootstrap, isolationLevel: 'read_committed' });
    clients.push(consumer);
    consumer.assign([{ topic: TOPIC, partition: 0 }]);
    consumer.seek({ topic: TOPIC, partition: 0 }, 0);
    const seen: string[] = [];
    const deadline = Date.now() + 20_000;
    while (!seen.includes('committed-1') && Date.now() < deadline)
      for (const r of await consumer.poll(200)) seen.push(r.value!.toString());
    // Everything before committed-1 in the log was read with it: the fenced record must not be among it.
    assert.deepEqual(seen, ['committed-1'], 'read_committed shows the committed record only');
    assert.equal(faked, FAKED, 'the abort marker was first answered UNKNOWN_TOPIC_OR_PARTITION');
    assert.ok(written >= 2, 'the abort marker was sent again, then the commit marker');
    // The coordinator logged the remote leader's answer, once for the three, naming the transaction.
    assert.equal(markerLines[leader]!.length, 0);
    assert.equal(markerLines[coordinator]!.length, 1, markerLines[coordinator]!.join('\n'));
    assert.match(
      markerLines[coordinator]![0]!,
      new RegExp(
        `ABORT marker of transaction ${TID} .* for ${TOPIC}-0 failed with UNKNOWN_TOPIC_OR_PARTITION`,
      ),
    );
  } finally {
    for (const c of clients.reverse()) await Promise.resolve(c.close()).catch(() => {});
    for (const b of brokers.reverse()) await b.stop().catch(() => {});
    await zk.stop();
  }
});
