// ElectLeaders (43): preferred or unclean leader election for the partitions named (or all), by the controller
// when it runs on this broker.

import { ErrorCode } from '../../protocol/errors.js';
import type { ElectLeadersRequest, ElectLeadersResponse } from '../../protocol/messages/43-elect-leaders.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const electLeadersHandler = defineHandler<ElectLeadersRequest, ElectLeadersResponse>({
  apiKey: ApiKey.ELECT_LEADERS,
  minVersion: 0,
  maxVersion: 2,
  handle(context, request) {
    // Kafka: ALTER on the cluster, else every partition named (none when all were asked) is refused.
    if (!authorizeCluster(context, AclOperation.ALTER)) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        replicaElectionResults: (request.topicPartitions ?? []).map((t) => ({
          topic: t.topic,
          partitionResult: t.partitions.map((partitionId) => ({
            partitionId,
            errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            errorMessage: null,
          })),
        })),
      };
    }
    return context.services.controller.electLeaders(request);
  },
});
