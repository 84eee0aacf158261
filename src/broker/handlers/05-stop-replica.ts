// StopReplica (5) from the controller over the wire: applied like the controller's direct call on its own broker
// (see cluster/controller-requests.ts).

import type { StopReplicaRequest, StopReplicaResponse } from '../../protocol/messages/05-stop-replica.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const stopReplicaHandler = defineHandler<StopReplicaRequest, StopReplicaResponse>({
  apiKey: ApiKey.STOP_REPLICA,
  minVersion: 0,
  maxVersion: 4,
  handle(context, request) {
    return context.services.controllerRequests.stopReplica(request);
  },
});
