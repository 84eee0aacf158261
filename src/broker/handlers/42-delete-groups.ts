// DeleteGroups (42): removes empty groups and their offsets (tombstones in __consumer_offsets). A group with
// members answers NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND.

import { ErrorCode } from '../../protocol/errors.js';
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../../protocol/messages/42-delete-groups.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeGroup } from '../authorization.js';

export const deleteGroupsHandler = defineHandler<DeleteGroupsRequest, DeleteGroupsResponse>({
  apiKey: ApiKey.DELETE_GROUPS,
  minVersion: 0,
  maxVersion: 2,
  async handle(context, request) {
    const coordinator = context.services.groupCoordinator;
    const results = await Promise.all(
      request.groupsNames.map(async (groupId) => ({
        groupId,
        errorCode: authorizeGroup(context, AclOperation.DELETE, groupId)
          ? await coordinator.deleteGroup(groupId)
          : ErrorCode.GROUP_AUTHORIZATION_FAILED,
      })),
    );
    return { throttleTimeMs: 0, results };
  },
});
