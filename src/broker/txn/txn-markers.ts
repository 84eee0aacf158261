// Transaction markers: the control batches that end a transaction in each of its partitions. The leader of a
// partition appends them (WriteTxnMarkers, key 27) as a leader append with acks=-1 (appendAsLeaderAndWait),
// answering once the marker is durable and under the high watermark, so the log's producer state, transaction
// index and LSO move on; NOT_LEADER_OR_FOLLOWER as soon as this broker stops leading the partition. The
// transaction coordinator writes them through writeTxnMarkers(): directly for partitions this broker leads, over
// the wire to the leaders of the others.
//
// The writer reports, for every partition whose leader did not answer NONE, that answer (or, when none came, why:
// LEADER_NOT_AVAILABLE, BROKER_NOT_AVAILABLE, NETWORK_EXCEPTION); the coordinator decides what each means, as
// Kafka's TransactionMarkerRequestCompletionHandler does (markerAnswerAction), and logs it. Most are sent again to
// the partition's leader of that moment. UNKNOWN_TOPIC_OR_PARTITION is such an answer too: a broker that has just
// restarted serves before the controller's LeaderAndIsr has given it its partitions. Only a partition this broker's
// metadata does not have (a deleted topic) is skipped, as Kafka's TransactionMarkerChannelManager does; one of
// __consumer_offsets only when the coordination store has no such topic either (offsetsPartitionPending). A marker
// given up on leaves the transaction's records open in that partition, and the COMMIT marker of the producer id's
// next transaction there would take them in: records of an aborted transaction would become visible to
// read_committed.

import type { MarkerFailure, MarkerRequest } from '../../coordinator/transaction/transaction-coordinator.js';
import { TRANSACTION_STATE_TOPIC } from '../../coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { WriteTxnMarkersResponse } from '../../protocol/messages/27-write-txn-markers.js';
import { buildEndTxnMarkerBatch } from '../../protocol/records/batch-builder.js';
import { ApiKey } from '../../protocol/registry.js';
import type { BrokerServices } from '../broker-services.js';
import { BrokerConnections } from '../cluster/broker-connections.js';
import { OFFSETS_TOPIC } from '../handlers/10-find-coordinator.js';
import { appendAsLeaderAndWait } from '../replica/replicated-append.js';

const MARKER_TIMEOUT_MS = 30_000;

/** Appends one marker to a partition led here; resolves with its error code once replicated (or failed). */
export async function appendMarker(
  services: BrokerServices,
  topic: string,
  index: number,
  marker: Omit<MarkerRequest, 'partitions' | 'transactionalId'>,
): Promise<number> {
  const partition = services.replicas.get(topic, index);
  if (partition === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  if (!partition.isLeader) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
  const nowMs = services.clock.nowMs();
  const batch = buildEndTxnMarkerBatch({
    commit: marker.commit,
    coordinatorEpoch: marker.coordinatorEpoch,
    producerId: marker.producerId,
    producerEpoch: marker.producerEpoch,
    timestamp: nowMs,
  });
  const errorCode = await appendAsLeaderAndWait(services, partition, batch, {
    nowMs,
    timeoutMs: MARKER_TIMEOUT_MS,
    fromClient: false,
  });
  if (errorCode !== ErrorCode.NONE) {
    // The coordinator logs the failure once, with the transactional id; a retry every 200 ms would flood this log.
    services.logger.debug(`transaction marker for ${topic}-${index} not written: error ${errorCode}`);
    return errorCode;
  }
  if (topic === OFFSETS_TOPIC) {
    // Offsets of the transaction for groups of this partition become the groups' on commit, vanish on abort.
    services.groupCoordinator.replayEndTransactionMarker(index, marker.producerId, marker.commit);
  }
  return ErrorCode.NONE;
}

/**
 * Whether a marker for a partition of __consumer_offsets that this broker's metadata does not show must wait. Kafka
 * skips it, as any partition its metadata cache lacks; it waits here only while the coordination store holds the
 * topic (or cannot tell): created, the group's TxnOffsetCommit may have written offsets there before the
 * controller's UpdateMetadata reached this broker, and skipped, they would stay pending for ever. Never created
 * (AddOffsetsToTxn does not create it; the group's FindCoordinator does, and may fail), it is skipped as in Kafka,
 * else the transaction would stay in its Prepare state for ever.
 */
async function offsetsPartitionPending(services: BrokerServices): Promise<boolean> {
  const written = await services.topicAdmin.topicWritten(OFFSETS_TOPIC).catch(() => null);
  return written !== false;
}

/** Sends markers to the partitions' leaders; resolves with the partitions that did not take them, and why. */
export function markerWriter(services: BrokerServices): {
  write(request: MarkerRequest): Promise<MarkerFailure[]>;
  close(): void;
} {
  const connections = new BrokerConnections(services, `broker-${services.brokerId}-txn`);
  return {
    async write(request) {
      const failed: MarkerFailure[] = [];
      const remote = new Map<number, { topic: string; partition: number }[]>();
      const local: Promise<void>[] = [];
      for (const tp of request.partitions) {
        const info = services.metadata.partition(tp.topic, tp.partition);
        if (info === undefined && tp.topic === OFFSETS_TOPIC) {
          local.push(
            offsetsPartitionPending(services).then((pending) => {
              if (pending) failed.push({ ...tp, errorCode: ErrorCode.LEADER_NOT_AVAILABLE });
            }),
          );
          continue;
        }
        if (info === undefined) continue; // a deleted partition needs no marker
        if (info.leader === services.brokerId) {
          local.push(
            appendMarker(services, tp.topic, tp.partition, request).then(
              (errorCode) => {
                if (errorCode !== ErrorCode.NONE) failed.push({ ...tp, errorCode });
              },
              () => {
                failed.push({ ...tp, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR });
              },
            ),
          );
        } else if (info.leader < 0) {
          failed.push({ ...tp, errorCode: ErrorCode.LEADER_NOT_AVAILABLE });
        } else {
          const list = remote.get(info.leader) ?? [];
          list.push(tp);
          remote.set(info.leader, list);
        }
      }
      for (const [brokerId, tps] of remote) {
        const connection = connections.to(brokerId);
        if (connection === undefined) {
          for (const tp of tps) failed.push({ ...tp, errorCode: ErrorCode.BROKER_NOT_AVAILABLE });
          continue;
        }
        const byTopic = new Map<string, number[]>();
        for (const tp of tps) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition]);
        local.push(
          connection
            .request<WriteTxnMarkersResponse>(
              ApiKey.WRITE_TXN_MARKERS,
              1,
              {
                markers: [
                  {
                    producerId: BigInt(request.producerId),
                    producerEpoch: request.producerEpoch,
                    transactionResult: request.commit,
                    coordinatorEpoch: request.coordinatorEpoch,
                    topics: [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
                  },
                ],
              },
              MARKER_TIMEOUT_MS,
            )
            .then(
              (response) => {
                // Each partition's answer; one the response leaves out counts as not answered.
                const answers = new Map<string, number>();
                for (const m of response.markers)
                  for (const t of m.topics)
                    for (const p of t.partitions) answers.set(`${t.name}\0${p.partitionIndex}`, p.errorCode);
                for (const tp of tps) {
                  const errorCode =
                    answers.get(`${tp.topic}\0${tp.partition}`) ?? ErrorCode.NETWORK_EXCEPTION;
                  if (errorCode !== ErrorCode.NONE) failed.push({ ...tp, errorCode });
                }
              },
              () => {
                for (const tp of tps) failed.push({ ...tp, errorCode: ErrorCode.NETWORK_EXCEPTION });
              },
            ),
        );
      }
      await Promise.all(local);
      return failed;
    },
    close() {
      connections.close();
    },
  };
}

export { TRANSACTION_STATE_TOPIC };
