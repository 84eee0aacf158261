// Heartbeat (12): keeps a member's session alive and tells it when the group is rebalancing
// (REBALANCE_IN_PROGRESS) so that it rejoins.

import { ErrorCode } from '../../protocol/errors.js';
import type { HeartbeatRequest, HeartbeatResponse } from '../../protocol/messages/12-heartbeat.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup } from '../authorization.js';

export const heartbeatHandler = defineHandler<HeartbeatRequest, HeartbeatResponse>({
  apiKey: ApiKey.HEARTBEAT,
  minVersion: 0,
  maxVersion: 4,
  handle(context, request) {
    if (!authorizeGroup(context, AclOperation.READ, request.groupId)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    }
    const errorCode = context.services.groupCoordinator.heartbeat(
      request.groupId,
      request.generationId,
      request.memberId,
      context.apiVersion >= 3 ? request.groupInstanceId : null,
    );
    return { throttleTimeMs: 0, errorCode };
  },
});
