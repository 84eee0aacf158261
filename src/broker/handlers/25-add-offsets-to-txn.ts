// AddOffsetsToTxn (25): the transaction will commit offsets of a group, so the group's partition of
// __consumer_offsets joins the transaction (its marker makes the TxnOffsetCommit offsets visible).

import { ErrorCode } from '../../protocol/errors.js';
import type {
  AddOffsetsToTxnRequest,
  AddOffsetsToTxnResponse,
} from '../../protocol/messages/25-add-offsets-to-txn.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup, authorizeTransactionalId } from '../authorization.js';
import { OFFSETS_TOPIC } from './10-find-coordinator.js';
import { fencedForVersion } from './24-add-partitions-to-txn.js';

export const addOffsetsToTxnHandler = defineHandler<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse>({
  apiKey: ApiKey.ADD_OFFSETS_TO_TXN,
  minVersion: 0,
  maxVersion: 3,
  async handle(context, request) {
    const { groupCoordinator, transactionCoordinator } = context.services;
    // Kafka's checks: WRITE on the transactional id, READ on the group.
    if (!authorizeTransactionalId(context, AclOperation.WRITE, request.transactionalId)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
    }
    if (!authorizeGroup(context, AclOperation.READ, request.groupId)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    }
    // As Kafka, the partition comes from the partition count (offsets.topic.num.partitions until the metadata
    // shows the topic) and is added unchecked: this broker's metadata may not show the topic just created, and
    // UNKNOWN_TOPIC_OR_PARTITION here is fatal to Java producers before 3.4. Nor is the topic created here (the
    // group's FindCoordinator creates it): a transaction that aborts without offsets leaves none, as in Kafka. The
    // marker waits for the metadata only if the topic was created (src/broker/txn/txn-markers.ts).
    const partition = groupCoordinator.partitionFor(request.groupId);
    const errors = await transactionCoordinator.addPartitions(
      request.transactionalId,
      Number(request.producerId),
      request.producerEpoch,
      [{ topic: OFFSETS_TOPIC, partition }],
      false,
    );
    const [errorCode] = [...errors.values()];
    return {
      throttleTimeMs: 0,
      errorCode: fencedForVersion(errorCode ?? ErrorCode.NONE, context.apiVersion, 2),
    };
  },
});
