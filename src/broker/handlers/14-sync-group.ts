// SyncGroup (14): after JoinGroup, the leader sends the assignment and every member waits for its own part;
// the answers go out once the assignment is stored in __consumer_offsets. v5 checks the protocol type and name.

import { ErrorCode } from '../../protocol/errors.js';
import type { SyncGroupRequest, SyncGroupResponse } from '../../protocol/messages/14-sync-group.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup } from '../authorization.js';

export const syncGroupHandler = defineHandler<SyncGroupRequest, SyncGroupResponse>({
  apiKey: ApiKey.SYNC_GROUP,
  minVersion: 0,
  maxVersion: 5,
  async handle(context, request) {
    const version = context.apiVersion;
    if (!authorizeGroup(context, AclOperation.READ, request.groupId)) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
        protocolType: null,
        protocolName: null,
        assignment: Buffer.alloc(0),
      };
    }
    const result = await context.services.groupCoordinator.sync({
      groupId: request.groupId,
      generationId: request.generationId,
      memberId: request.memberId,
      groupInstanceId: version >= 3 ? request.groupInstanceId : null,
      protocolType: version >= 5 ? request.protocolType : null,
      protocolName: version >= 5 ? request.protocolName : null,
      // Copies: the request frame's memory is not kept beyond the request.
      assignments: request.assignments.map((a) => ({
        memberId: a.memberId,
        assignment: Buffer.from(a.assignment),
      })),
    });
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      protocolType: result.protocolType,
      protocolName: result.protocolName,
      assignment: result.assignment,
    };
  },
});
