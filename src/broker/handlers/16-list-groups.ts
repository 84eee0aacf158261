// ListGroups (16): the groups this broker coordinates; v4 filters by state, v5 by type (every group here is
// "classic").

import type { ListGroupsRequest, ListGroupsResponse } from '../../protocol/messages/16-list-groups.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorize, authorizeCluster, ResourceType } from '../authorization.js';

export const listGroupsHandler = defineHandler<ListGroupsRequest, ListGroupsResponse>({
  apiKey: ApiKey.LIST_GROUPS,
  minVersion: 0,
  maxVersion: 5,
  handle(context, request) {
    const version = context.apiVersion;
    const result = context.services.groupCoordinator.list(
      version >= 4 ? request.statesFilter : [],
      version >= 5 ? request.typesFilter : [],
    );
    // Kafka: DESCRIBE on the cluster lists every group; otherwise only the groups the principal may describe.
    const groups =
      context.services.authorizer === null || authorizeCluster(context, AclOperation.DESCRIBE)
        ? result.groups
        : result.groups.filter((g) =>
            authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId, false),
          );
    return { throttleTimeMs: 0, errorCode: result.errorCode, groups };
  },
});
