// DeleteRecords (21): moves a partition's log start offset forward (offset -1 means the high watermark), so
// records below it are no longer served and whole segments below it are deleted.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DeleteRecordsRequest,
  DeleteRecordsResponse,
} from '../../protocol/messages/21-delete-records.js';
import { ApiKey } from '../../protocol/registry.js';
import { StorageErrorCode } from '../../storage/error-codes.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeTopic } from '../authorization.js';
import { leaderPartition } from '../replica/leader-lookup.js';

const HIGH_WATERMARK = -1n;

export const deleteRecordsHandler = defineHandler<DeleteRecordsRequest, DeleteRecordsResponse>({
  apiKey: ApiKey.DELETE_RECORDS,
  minVersion: 0,
  maxVersion: 2,
  handle(context, request) {
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((topic) => {
        // Kafka's check: DELETE on the topic.
        const allowed = authorizeTopic(context, AclOperation.DELETE, topic.name);
        return {
          name: topic.name,
          partitions: topic.partitions.map((p) => {
            if (!allowed) {
              return {
                partitionIndex: p.partitionIndex,
                lowWatermark: -1n,
                errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              };
            }
            const partition = leaderPartition(context.services, topic.name, p.partitionIndex);
            if (typeof partition === 'number') {
              return { partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode: partition };
            }
            const log = partition.log;
            const target = p.offset === HIGH_WATERMARK ? log.highWatermark : Number(p.offset);
            const result = log.deleteRecordsBefore(target);
            return {
              partitionIndex: p.partitionIndex,
              lowWatermark: BigInt(result.lowWatermark),
              errorCode:
                result.errorCode === StorageErrorCode.None ? ErrorCode.NONE : ErrorCode.OFFSET_OUT_OF_RANGE,
            };
          }),
        };
      }),
    };
  },
});
