// Transaction verification of Produce (KIP-890 part 1, transaction.partition.verification.enable, default true,
// cluster-wide dynamic): before a partition's leader appends the first transactional batch of a producer's
// transaction there (the producer has no open transaction in that partition's log), it checks with the
// transaction coordinator that the partition was added to the producer's ongoing transaction. A partition that was
// not is answered INVALID_TXN_STATE ("Partition was not added to the transaction"), as Kafka does, and nothing is
// appended: a transactional write without AddPartitionsToTxn would otherwise open a transaction no marker ever
// ends, holding back read_committed consumers (a hanging transaction).
//
// The check is answered in process, synchronously, when this broker coordinates the transactional id, so nothing
// can end the transaction between the answer and the append. A coordinator on another broker is asked over the
// inter-broker listener with AddPartitionsToTxn v4 verifyOnly, as Kafka's AddPartitionsToTxnManager does, and the
// append follows the answer. Before asking, each partition's log takes a verification guard for the producer
// (Kafka's VerificationStateEntry, producer-state.ts): a transaction marker written while the coordinator answers
// ends the guard, and the append that finds it gone is refused with INVALID_TXN_STATE instead of opening a
// transaction that no marker would ever end.
// The coordinator's answers are converted for the producer as Kafka 3.9's AddPartitionsToTxnManager and
// ReplicaManager.appendRecords (postVerificationCallback) do:
// - a partition not added (the coordinator's TRANSACTION_ABORTABLE) is TRANSACTION_ABORTABLE for Produce v11+,
//   whose producers know it (KIP-890), and INVALID_TXN_STATE for older ones ("Partition was not added to the
//   transaction");
// - CLUSTER_AUTHORIZATION_FAILED for the whole request (this broker may not ask the coordinator) is not the
//   producer's to see: INVALID_TXN_STATE, the verification did not complete;
// - PRODUCER_FENCED (the coordinator has left the batch's epoch: it timed the transaction out, or a newer producer
//   took the id) is INVALID_PRODUCER_EPOCH, which producers take as abortable (KIP-588), with no error message;
// - coordinator trouble (loading, unavailable, moved, unreachable) and a transaction being ended
//   (CONCURRENT_TRANSACTIONS) are NOT_ENOUGH_REPLICAS, which every producer retries without a metadata refresh.
//
// TxnOffsetCommit is verified the same way for the group's __consumer_offsets partition (verifyTxnOffsetCommit),
// with a guard always, since the group coordinator appends after its own checks.
//
// Ownership: one connection per coordinator broker, made on first use and kept for the broker's life; closed by
// closeTxnVerification() when the broker stops.

import type { ProducerId } from '../../common/ids.js';
import { TRANSACTION_STATE_TOPIC, tpKey } from '../../coordinator/transaction/transaction-coordinator.js';
import { ErrorCode, errorName } from '../../protocol/errors.js';
import type { ProduceRequest } from '../../protocol/messages/00-produce.js';
import type { AddPartitionsToTxnResponse } from '../../protocol/messages/24-add-partitions-to-txn.js';
import { BATCH_HEADER_BYTES, batchHeader, CURRENT_MAGIC } from '../../protocol/records/batch-header.js';
import { ApiKey } from '../../protocol/registry.js';
import type { BrokerServices } from '../broker-services.js';
import { BrokerConnections } from '../cluster/broker-connections.js';
import type { InterBrokerConnection } from '../cluster/inter-broker-connection.js';

export const VERIFICATION_KEY = 'transaction.partition.verification.enable';

/** A partition's verification failure: the error code and message its produce response carries. */
export interface VerificationFailure {
  readonly errorCode: number;
  /** Null where Kafka gives the error's own (no custom message in the response). */
  readonly errorMessage: string | null;
}

/** What a partition's append must still find after a remote verification (producer-state.ts verifiedBy). */
export interface VerificationGuard {
  readonly producerId: ProducerId;
  readonly guard: object;
}

/** A remote coordinator's verdict: the partitions that failed, and the guards of those to append. */
export interface RemoteVerification {
  readonly failures: Map<string, VerificationFailure> | null;
  readonly guards: ReadonlyMap<string, VerificationGuard>;
}

/** Whether the key is on in the merged broker layers (static and dynamic); on unless set to false. */
function verificationEnabled(services: BrokerServices): boolean {
  const value = services.topicConfigs.mergedBrokerConfig().get(VERIFICATION_KEY);
  return value === undefined || value.trim().toLowerCase() !== 'false';
}

/** The first Produce version whose producers handle TRANSACTION_ABORTABLE (Kafka's genericError, KIP-890). */
const TRANSACTION_ABORTABLE_PRODUCE_VERSION = 11;

/** What the produce handler answers for a coordinator's verification error, to a Produce of `produceVersion`. */
function produceError(errorCode: number, produceVersion: number): VerificationFailure {
  switch (errorCode) {
    case ErrorCode.TRANSACTION_ABORTABLE:
      if (produceVersion >= TRANSACTION_ABORTABLE_PRODUCE_VERSION) return { errorCode, errorMessage: null };
      return notAdded();
    case ErrorCode.INVALID_TXN_STATE:
      return notAdded();
    case ErrorCode.PRODUCER_FENCED:
      // With no message, as Kafka's: postVerificationCallback has no custom exception for it.
      return { errorCode: ErrorCode.INVALID_PRODUCER_EPOCH, errorMessage: null };
    case ErrorCode.CONCURRENT_TRANSACTIONS:
    case ErrorCode.NETWORK_EXCEPTION:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.NOT_COORDINATOR:
      return {
        errorCode: ErrorCode.NOT_ENOUGH_REPLICAS,
        errorMessage: `Unable to verify the partition has been added to the transaction. Underlying error: ${errorName(errorCode)}`,
      };
    default:
      return { errorCode, errorMessage: null };
  }
}

function notAdded(): VerificationFailure {
  return {
    errorCode: ErrorCode.INVALID_TXN_STATE,
    errorMessage: 'Partition was not added to the transaction',
  };
}

/** How long a leader waits for a remote coordinator's verification answer. */
const VERIFY_TIMEOUT_MS = 10_000;

const connectionsOf = new WeakMap<BrokerServices, BrokerConnections>();

/** The broker stops: its connections to transaction coordinators close. */
export function closeTxnVerification(services: BrokerServices): void {
  connectionsOf.get(services)?.close();
  connectionsOf.delete(services);
}

function connectionTo(services: BrokerServices, brokerId: number): InterBrokerConnection | undefined {
  let connections = connectionsOf.get(services);
  if (connections === undefined) {
    connections = new BrokerConnections(services, `broker-${services.brokerId}-txn-verification`);
    connectionsOf.set(services, connections);
  }
  return connections.to(brokerId);
}

/** AddPartitionsToTxn v4 verifyOnly to the coordinator of `transactionalId` elsewhere: each partition's answer. */
async function verifyRemotely(
  services: BrokerServices,
  transactionalId: string,
  producer: { producerId: number; producerEpoch: number },
  partitions: readonly { topic: string; partition: number }[],
): Promise<Map<string, number>> {
  const answers = new Map<string, number>();
  const all = (errorCode: number): Map<string, number> => {
    for (const p of partitions) answers.set(tpKey(p.topic, p.partition), errorCode);
    return answers;
  };
  const stateTopicPartition = services.transactionCoordinator.partitionFor(transactionalId);
  const leader = services.metadata.partition(TRANSACTION_STATE_TOPIC, stateTopicPartition)?.leader ?? -1;
  if (leader < 0 || leader === services.brokerId) return all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const connection = connectionTo(services, leader);
  if (connection === undefined) return all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const byTopic = new Map<string, number[]>();
  for (const p of partitions) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
  let response: AddPartitionsToTxnResponse;
  try {
    response = await connection.request<AddPartitionsToTxnResponse>(
      ApiKey.ADD_PARTITIONS_TO_TXN,
      4,
      {
        transactions: [
          {
            transactionalId,
            producerId: BigInt(producer.producerId),
            producerEpoch: producer.producerEpoch,
            verifyOnly: true,
            topics: [...byTopic].map(([name, list]) => ({ name, partitions: list })),
          },
        ],
        v3AndBelowTransactionalId: '',
        v3AndBelowProducerId: 0n,
        v3AndBelowProducerEpoch: 0,
        v3AndBelowTopics: [],
      },
      VERIFY_TIMEOUT_MS,
    );
  } catch {
    // Disconnected or timed out, Kafka's NETWORK_EXCEPTION.
    return all(ErrorCode.NETWORK_EXCEPTION);
  }
  // This broker may not ask (no CLUSTER_ACTION): the verification did not complete, which is not the producer's
  // authorization error, as Kafka's AddPartitionsToTxnManager answers it.
  if (response.errorCode === ErrorCode.CLUSTER_AUTHORIZATION_FAILED) return all(ErrorCode.INVALID_TXN_STATE);
  if (response.errorCode !== ErrorCode.NONE) return all(response.errorCode);
  for (const t of response.resultsByTransaction)
    for (const topic of t.topicResults)
      for (const p of topic.resultsByPartition)
        answers.set(tpKey(topic.name, p.partitionIndex), p.partitionErrorCode);
  // A partition the answer leaves out was not verified.
  for (const p of partitions)
    if (!answers.has(tpKey(p.topic, p.partition)))
      answers.set(tpKey(p.topic, p.partition), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return answers;
}

function failuresOf(
  partitions: readonly { topic: string; partition: number }[],
  answers: ReadonlyMap<string, number>,
  produceVersion: number,
): Map<string, VerificationFailure> | null {
  let failures: Map<string, VerificationFailure> | null = null;
  for (const p of partitions) {
    const key = tpKey(p.topic, p.partition);
    const errorCode = answers.get(key) ?? ErrorCode.NONE;
    if (errorCode === ErrorCode.NONE) continue;
    failures ??= new Map();
    failures.set(key, produceError(errorCode, produceVersion));
  }
  return failures;
}

/**
 * The partitions of a transactional produce request that fail verification, keyed as tpKey; null when none does
 * or nothing needed verifying. Only partitions this broker leads are looked at (the produce path answers the
 * others), and only batches whose producer has no open transaction in the partition's log. Synchronous when this
 * broker coordinates the transactional id (or nothing needs verifying); a promise when the coordinator is remote.
 */
export function verifyTransactionalProduce(
  services: BrokerServices,
  request: ProduceRequest,
  produceVersion: number,
): Map<string, VerificationFailure> | null | Promise<RemoteVerification> {
  const transactionalId = request.transactionalId;
  if (transactionalId === null) return null;
  let producer: { producerId: number; producerEpoch: number } | null = null;
  const toVerify: { topic: string; partition: number }[] = [];
  for (const topic of request.topicData) {
    for (const data of topic.partitionData) {
      const records = data.records;
      if (
        records === null ||
        records.length < BATCH_HEADER_BYTES ||
        batchHeader.magic(records) !== CURRENT_MAGIC ||
        !batchHeader.isTransactional(records)
      )
        continue;
      const partition = services.replicas.get(topic.name, data.index);
      if (partition === undefined || !partition.isLeader) continue;
      const producerId = batchHeader.producerId(records);
      const open = partition.log.producerState.producer(producerId as ProducerId);
      if (open !== undefined && open.currentTxnFirstOffset >= 0) continue;
      producer ??= { producerId, producerEpoch: batchHeader.producerEpoch(records) };
      toVerify.push({ topic: topic.name, partition: data.index });
    }
  }
  if (producer === null || !verificationEnabled(services)) return null;
  const answers = services.transactionCoordinator.verifyPartitions(
    transactionalId,
    producer.producerId,
    producer.producerEpoch,
    toVerify,
  );
  const coordinatedHere = toVerify.every(
    (p) => answers.get(tpKey(p.topic, p.partition)) !== ErrorCode.NOT_COORDINATOR,
  );
  if (coordinatedHere) return failuresOf(toVerify, answers, produceVersion);
  const guards = new Map<string, VerificationGuard>();
  const producerId = producer.producerId as ProducerId;
  for (const p of toVerify) {
    const partition = services.replicas.get(p.topic, p.partition);
    if (partition === undefined) continue;
    guards.set(tpKey(p.topic, p.partition), {
      producerId,
      guard: partition.log.producerState.startVerification(producerId),
    });
  }
  return verifyRemotely(services, transactionalId, producer, toVerify).then((remote) => ({
    failures: failuresOf(toVerify, remote, produceVersion),
    guards,
  }));
}

/** The outcome of a TxnOffsetCommit's verification: an error to answer, or the guard its append must still find. */
export interface OffsetCommitVerification {
  readonly errorCode: number;
  readonly guard: VerificationGuard | null;
}

/**
 * KIP-890 verification of a TxnOffsetCommit (Kafka 3.9's GroupCoordinator.handleTxnCommitOffsets, through
 * ReplicaManager.maybeStartTransactionVerificationForPartition): before the coordinator appends the offsets to the
 * group's __consumer_offsets partition `offsetsPartition`, the transaction coordinator must have that partition in
 * the producer's ongoing transaction (AddOffsetsToTxn put it there). Skipped when the key is off or the producer
 * has a transaction open in the partition already. The partition's producer state takes a guard first, so that a
 * marker written while the coordinator answers refuses the append. The answer's error is converted as Kafka's
 * AddPartitionsToTxnManager does for the version (`genericErrors`: TxnOffsetCommit v4+, which knows
 * TRANSACTION_ABORTABLE); the group coordinator then converts it for offset commits (offsetCommitError).
 */
export function verifyTxnOffsetCommit(
  services: BrokerServices,
  transactionalId: string,
  producer: { producerId: number; producerEpoch: number },
  offsetsTopic: string,
  offsetsPartition: number,
  genericErrors: boolean,
): OffsetCommitVerification | Promise<OffsetCommitVerification> {
  if (!verificationEnabled(services)) return { errorCode: ErrorCode.NONE, guard: null };
  const partition = services.replicas.get(offsetsTopic, offsetsPartition);
  if (partition === undefined || !partition.isLeader) {
    return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, guard: null };
  }
  const producerId = producer.producerId as ProducerId;
  const open = partition.log.producerState.producer(producerId);
  if (open !== undefined && open.currentTxnFirstOffset >= 0)
    return { errorCode: ErrorCode.NONE, guard: null };
  const guard: VerificationGuard = {
    producerId,
    guard: partition.log.producerState.startVerification(producerId),
  };
  const toVerify = [{ topic: offsetsTopic, partition: offsetsPartition }];
  const key = tpKey(offsetsTopic, offsetsPartition);
  const outcome = (answers: ReadonlyMap<string, number>): OffsetCommitVerification => ({
    errorCode: coordinatorAnswerForCommit(answers.get(key) ?? ErrorCode.NONE, genericErrors),
    guard,
  });
  const local = services.transactionCoordinator.verifyPartitions(
    transactionalId,
    producer.producerId,
    producer.producerEpoch,
    toVerify,
  );
  if (local.get(key) !== ErrorCode.NOT_COORDINATOR) return outcome(local);
  return verifyRemotely(services, transactionalId, producer, toVerify).then(outcome);
}

/** Kafka's AddPartitionsToTxnManager conversions of a verification answer, for a TxnOffsetCommit. */
function coordinatorAnswerForCommit(errorCode: number, genericErrors: boolean): number {
  if (errorCode === ErrorCode.PRODUCER_FENCED) return ErrorCode.INVALID_PRODUCER_EPOCH;
  if (errorCode === ErrorCode.TRANSACTION_ABORTABLE && !genericErrors) return ErrorCode.INVALID_TXN_STATE;
  return errorCode;
}
