// OffsetFetch (9): a group's committed offsets, for the partitions asked for or (v2+, null topics) all of them.
// Before v2 errors are per partition only; v2 adds a top-level error; v7 require_stable (a partition with a
// commit still being written answers UNSTABLE_OFFSET_COMMIT); v8 asks for several groups at once;
// v9 names the KIP-848 member and its epoch, which its group checks.

import type { FetchOffsetsResult } from '../../coordinator/group/group-coordinator.js';
import type {
  OffsetFetchRequest,
  OffsetFetchResponse,
  OffsetFetchResponseOffsetFetchResponseTopic,
} from '../../protocol/messages/09-offset-fetch.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';

export const offsetFetchHandler = defineHandler<OffsetFetchRequest, OffsetFetchResponse>({
  apiKey: ApiKey.OFFSET_FETCH,
  minVersion: 0,
  maxVersion: 9,
  handle(context, request) {
    const version = context.apiVersion;
    const coordinator = context.services.groupCoordinator;
    const requireStable = version >= 7 && request.requireStable;
    if (version >= 8) {
      return {
        throttleTimeMs: 0,
        topics: [],
        errorCode: 0,
        groups: request.groups.map((g) => {
          const member =
            version >= 9 && g.memberId !== null ? { memberId: g.memberId, memberEpoch: g.memberEpoch } : null;
          const result = coordinator.fetchOffsets(g.groupId, g.topics, requireStable, member);
          return { groupId: g.groupId, errorCode: result.errorCode, topics: wireTopics(result) };
        }),
      };
    }
    const result = coordinator.fetchOffsets(request.groupId, request.topics, requireStable);
    return {
      throttleTimeMs: 0,
      // v0 and v1 report coordinator errors in every partition; from v2 at the top as well.
      errorCode: version >= 2 ? result.errorCode : 0,
      topics: wireTopics(result),
      groups: [],
    };
  },
});

function wireTopics(result: FetchOffsetsResult): OffsetFetchResponseOffsetFetchResponseTopic[] {
  return result.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({
      partitionIndex: p.partitionIndex,
      committedOffset: BigInt(p.committedOffset),
      committedLeaderEpoch: p.committedLeaderEpoch,
      metadata: p.metadata,
      errorCode: p.errorCode,
    })),
  }));
}
