// TxnOffsetCommit (28): offsets of a transaction, sent to the group coordinator after AddOffsetsToTxn. They are
// held until the transaction's marker reaches the group's partition (src/broker/txn/txn-offsets.ts).

import { toOffset } from '../../common/ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  TxnOffsetCommitRequest,
  TxnOffsetCommitResponse,
} from '../../protocol/messages/28-txn-offset-commit.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const txnOffsetCommitHandler = defineHandler<TxnOffsetCommitRequest, TxnOffsetCommitResponse>({
  apiKey: ApiKey.TXN_OFFSET_COMMIT,
  minVersion: 0,
  maxVersion: 3,
  async handle(context, request) {
    const { groupCoordinator, txnOffsets } = context.services;
    const available = groupCoordinator.fetchOffsets(request.groupId, [], false).errorCode;
    const errorCode = available === ErrorCode.NONE ? ErrorCode.NONE : available;
    if (errorCode === ErrorCode.NONE) {
      txnOffsets.add(
        Number(request.producerId),
        request.groupId,
        groupCoordinator.partitionFor(request.groupId),
        request.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            committedOffset: toOffset(p.committedOffset),
            committedLeaderEpoch: context.apiVersion >= 2 ? p.committedLeaderEpoch : -1,
            commitTimestampMs: -1,
            committedMetadata: p.committedMetadata,
          })),
        })),
      );
    }
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
      })),
    };
  },
});
