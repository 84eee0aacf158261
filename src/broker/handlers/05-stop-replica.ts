// StopReplica (5) from the controller over the wire: applied like the controller's direct call on its own broker
// (see cluster/controller-requests.ts).

import { ErrorCode } from '../../protocol/errors.js';
import type { StopReplicaRequest, StopReplicaResponse } from '../../protocol/messages/05-stop-replica.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const stopReplicaHandler = defineHandler<StopReplicaRequest, StopReplicaResponse>({
  apiKey: ApiKey.STOP_REPLICA,
  minVersion: 0,
  maxVersion: 4,
  handle(context, request) {
    if (!authorizeCluster(context, AclOperation.CLUSTER_ACTION)) {
      return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, partitionErrors: [] };
    }
    return context.services.controllerRequests.stopReplica(request);
  },
});
