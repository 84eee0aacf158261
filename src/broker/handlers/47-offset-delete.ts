// OffsetDelete (47): removes committed offsets of a group, except for topics the group's members subscribe to
// (GROUP_SUBSCRIBED_TO_TOPIC).

import type { OffsetDeleteRequest, OffsetDeleteResponse } from '../../protocol/messages/47-offset-delete.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const offsetDeleteHandler = defineHandler<OffsetDeleteRequest, OffsetDeleteResponse>({
  apiKey: ApiKey.OFFSET_DELETE,
  minVersion: 0,
  maxVersion: 0,
  async handle(context, request) {
    const result = await context.services.groupCoordinator.deleteOffsets(request.groupId, request.topics);
    return { errorCode: result.errorCode, throttleTimeMs: 0, topics: result.topics };
  },
});
