// Transaction verification of Produce (KIP-890 part 1, transaction.partition.verification.enable, default true,
// cluster-wide dynamic): before a partition's leader appends the first transactional batch of a producer's
// transaction there (the producer has no open transaction in that partition's log), it checks with the
// transaction coordinator that the partition was added to the producer's ongoing transaction. A partition that was
// not is answered INVALID_TXN_STATE ("Partition was not added to the transaction"), as Kafka does, and nothing is
// appended: a transactional write without AddPartitionsToTxn would otherwise open a transaction no marker ever
// ends, holding back read_committed consumers (a hanging transaction).
//
// The check is answered in process, synchronously, when this broker coordinates the transactional id, so nothing
// can end the transaction between the answer and the append. A coordinator on another broker (the check is then
// AddPartitionsToTxn v4 with verifyOnly in Kafka) is not asked yet: those batches are appended unverified, as
// before this check existed. Coordinator trouble (loading, unavailable) and a transaction being ended
// (CONCURRENT_TRANSACTIONS) are answered NOT_ENOUGH_REPLICAS, which every producer retries, as Kafka converts them
// for produce.

import type { ProducerId } from '../../common/ids.js';
import { tpKey } from '../../coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { ProduceRequest } from '../../protocol/messages/00-produce.js';
import { BATCH_HEADER_BYTES, batchHeader, CURRENT_MAGIC } from '../../protocol/records/batch-header.js';
import type { BrokerServices } from '../broker-services.js';

export const VERIFICATION_KEY = 'transaction.partition.verification.enable';

/** A partition's verification failure: the error code and message its produce response carries. */
export interface VerificationFailure {
  readonly errorCode: number;
  readonly errorMessage: string;
}

/** Whether the key is on in the merged broker layers (static and dynamic); on unless set to false. */
function verificationEnabled(services: BrokerServices): boolean {
  const value = services.topicConfigs.mergedBrokerConfig().get(VERIFICATION_KEY);
  return value === undefined || value.trim().toLowerCase() !== 'false';
}

/** What the produce handler answers for a coordinator's verification error. */
function produceError(errorCode: number): VerificationFailure {
  switch (errorCode) {
    case ErrorCode.INVALID_TXN_STATE:
      return { errorCode, errorMessage: 'Partition was not added to the transaction' };
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.CONCURRENT_TRANSACTIONS:
      return {
        errorCode: ErrorCode.NOT_ENOUGH_REPLICAS,
        errorMessage: `Unable to verify the partition has been added to the transaction (error ${errorCode})`,
      };
    default:
      return {
        errorCode,
        errorMessage: `Unable to verify the partition has been added to the transaction (error ${errorCode})`,
      };
  }
}

/**
 * The partitions of a transactional produce request that fail verification, keyed as tpKey; null when none does
 * or nothing needed verifying. Only partitions this broker leads are looked at (the produce path answers the
 * others), and only batches whose producer has no open transaction in the partition's log.
 */
export function verifyTransactionalProduce(
  services: BrokerServices,
  request: ProduceRequest,
): Map<string, VerificationFailure> | null {
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
  let failures: Map<string, VerificationFailure> | null = null;
  for (const p of toVerify) {
    const key = tpKey(p.topic, p.partition);
    const errorCode = answers.get(key) ?? ErrorCode.NONE;
    // Coordinated on another broker: not asked (see the file header).
    if (errorCode === ErrorCode.NONE || errorCode === ErrorCode.NOT_COORDINATOR) continue;
    failures ??= new Map();
    failures.set(key, produceError(errorCode));
  }
  return failures;
}
