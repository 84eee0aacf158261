// AlterPartition (56): a leader's ISR change, handled by the controller when it runs on this broker
// (NOT_CONTROLLER otherwise, and the leader retries against the new controller).

import { ErrorCode } from '../../protocol/errors.js';
import type {
  AlterPartitionRequest,
  AlterPartitionResponse,
} from '../../protocol/messages/56-alter-partition.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const alterPartitionHandler = defineHandler<AlterPartitionRequest, AlterPartitionResponse>({
  apiKey: ApiKey.ALTER_PARTITION,
  minVersion: 0,
  maxVersion: 3,
  handle(context, request) {
    if (!authorizeCluster(context, AclOperation.CLUSTER_ACTION)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, topics: [] };
    }
    return context.services.controller.alterPartition(request, context.apiVersion);
  },
});
