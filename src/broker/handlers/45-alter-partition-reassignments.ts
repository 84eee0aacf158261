// AlterPartitionReassignments (45): starts, replaces or cancels (replicas null) partition reassignments (KIP-455).
// Only the controller acts on it, as in Kafka; another broker answers NOT_CONTROLLER and the client looks the
// controller up again.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  AlterPartitionReassignmentsRequest,
  AlterPartitionReassignmentsResponse,
} from '../../protocol/messages/45-alter-partition-reassignments.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const alterPartitionReassignmentsHandler = defineHandler<
  AlterPartitionReassignmentsRequest,
  AlterPartitionReassignmentsResponse
>({
  apiKey: ApiKey.ALTER_PARTITION_REASSIGNMENTS,
  minVersion: 0,
  maxVersion: 0,
  handle(context, request) {
    if (!authorizeCluster(context, AclOperation.ALTER)) {
      const errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      return { throttleTimeMs: 0, errorCode, errorMessage: null, responses: [] };
    }
    return context.services.controller.alterPartitionReassignments(request);
  },
});
