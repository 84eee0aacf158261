// ControlledShutdown (7): a broker about to stop asks the controller to move the leadership of its partitions
// away first; the answer lists the partitions it still leads (the broker asks again until none are left).

import { ErrorCode } from '../../protocol/errors.js';
import type {
  ControlledShutdownRequest,
  ControlledShutdownResponse,
} from '../../protocol/messages/07-controlled-shutdown.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const controlledShutdownHandler = defineHandler<ControlledShutdownRequest, ControlledShutdownResponse>(
  {
    apiKey: ApiKey.CONTROLLED_SHUTDOWN,
    minVersion: 0,
    maxVersion: 3,
    handle(context, request) {
      if (!authorizeCluster(context, AclOperation.CLUSTER_ACTION)) {
        return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, remainingPartitions: [] };
      }
      return context.services.controller.controlledShutdown(request);
    },
  },
);
