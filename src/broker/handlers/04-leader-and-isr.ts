// LeaderAndIsr (4) from the controller over the wire: applied like the controller's direct call on its own broker
// (see cluster/controller-requests.ts).

import { ErrorCode } from '../../protocol/errors.js';
import type { LeaderAndIsrRequest, LeaderAndIsrResponse } from '../../protocol/messages/04-leader-and-isr.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const leaderAndIsrHandler = defineHandler<LeaderAndIsrRequest, LeaderAndIsrResponse>({
  apiKey: ApiKey.LEADER_AND_ISR,
  minVersion: 0,
  maxVersion: 7,
  handle(context, request) {
    // From the controller: CLUSTER_ACTION, which the brokers' principal has through super.users or an ACL.
    if (!authorizeCluster(context, AclOperation.CLUSTER_ACTION)) {
      return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, partitionErrors: [], topics: [] };
    }
    return context.services.controllerRequests.leaderAndIsr(request);
  },
});
