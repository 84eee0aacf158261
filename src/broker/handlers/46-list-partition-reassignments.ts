// ListPartitionReassignments (46): the reassignments in progress, with their adding and removing replicas. Only
// the controller knows them; another broker answers NOT_CONTROLLER, as in Kafka.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  ListPartitionReassignmentsRequest,
  ListPartitionReassignmentsResponse,
} from '../../protocol/messages/46-list-partition-reassignments.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const listPartitionReassignmentsHandler = defineHandler<
  ListPartitionReassignmentsRequest,
  ListPartitionReassignmentsResponse
>({
  apiKey: ApiKey.LIST_PARTITION_REASSIGNMENTS,
  minVersion: 0,
  maxVersion: 0,
  handle(context, request) {
    if (!authorizeCluster(context, AclOperation.DESCRIBE)) {
      const errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      return { throttleTimeMs: 0, errorCode, errorMessage: null, topics: [] };
    }
    return context.services.controller.listPartitionReassignments(request);
  },
});
