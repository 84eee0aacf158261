// DescribeGroups (15): state, protocol and members of groups this broker coordinates. A group it does not know
// is described as Dead with no error (as Kafka does up to v5); one it does not coordinate answers NOT_COORDINATOR.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeGroupsRequest,
  DescribeGroupsResponse,
} from '../../protocol/messages/15-describe-groups.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizedOperations, authorizeGroup } from '../authorization.js';
import { AUTHORIZED_OPERATIONS_OMITTED } from '../authorized-operations.js';

export const describeGroupsHandler = defineHandler<DescribeGroupsRequest, DescribeGroupsResponse>({
  apiKey: ApiKey.DESCRIBE_GROUPS,
  minVersion: 0,
  maxVersion: 5,
  handle(context, request) {
    const coordinator = context.services.groupCoordinator;
    return {
      throttleTimeMs: 0,
      groups: request.groups.map((groupId) => {
        if (!authorizeGroup(context, AclOperation.DESCRIBE, groupId)) {
          return {
            errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
            groupId,
            groupState: '',
            protocolType: '',
            protocolData: '',
            members: [],
            authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
          };
        }
        const g = coordinator.describe(groupId);
        // Kafka fills the field (v3+) only for a group described without error.
        const asked = request.includeAuthorizedOperations && g.errorCode === ErrorCode.NONE;
        return {
          ...g,
          members: [...g.members],
          authorizedOperations: authorizedOperations(context, 'group', groupId, asked),
        };
      }),
    };
  },
});
