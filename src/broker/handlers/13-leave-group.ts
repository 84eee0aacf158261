// LeaveGroup (13): members leave at once instead of waiting for their sessions to expire. v0-v2 name one member
// by id and answer with its error at the top level; v3+ take a batch of members, each by id or by
// group.instance.id, and answer each one.

import { ErrorCode } from '../../protocol/errors.js';
import type { LeaveGroupRequest, LeaveGroupResponse } from '../../protocol/messages/13-leave-group.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup } from '../authorization.js';

export const leaveGroupHandler = defineHandler<LeaveGroupRequest, LeaveGroupResponse>({
  apiKey: ApiKey.LEAVE_GROUP,
  minVersion: 0,
  maxVersion: 5,
  handle(context, request) {
    if (!authorizeGroup(context, AclOperation.READ, request.groupId)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] };
    }
    const batched = context.apiVersion >= 3;
    const members = batched
      ? request.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId }))
      : [{ memberId: request.memberId, groupInstanceId: null }];
    const result = context.services.groupCoordinator.leave(request.groupId, members);
    if (batched) return { throttleTimeMs: 0, errorCode: result.errorCode, members: [...result.members] };
    const errorCode = result.errorCode !== 0 ? result.errorCode : (result.members[0]?.errorCode ?? 0);
    return { throttleTimeMs: 0, errorCode, members: [] };
  },
});
