// OffsetFetch (9): a group's committed offsets, for the partitions asked for or (v2+, null topics) all of them.
// Before v2 errors are per partition only; v2 adds a top-level error (a failed group answers it and no topics);
// v7 require_stable (a partition with a commit still being written answers UNSTABLE_OFFSET_COMMIT); v8 asks for
// several groups at once (a group that fails is answered with its error and no topics); v9 names the KIP-848
// member and its epoch, which its group checks. A stable fetch is answered only once this broker is shown to still
// lead the group's partition (GroupCoordinator.fetchStableOffsets). v0 reads the offsets OffsetCommit v0 wrote to
// the coordination store, as Kafka reads them from ZooKeeper.

import type { FetchOffsetsResult } from '../../coordinator/group/group-coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  OffsetFetchRequest,
  OffsetFetchResponse,
  OffsetFetchResponseOffsetFetchResponseTopic,
} from '../../protocol/messages/09-offset-fetch.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler, type RequestContext } from '../api-handler.js';
import { AclOperation, authorizeGroup, authorizeTopic } from '../authorization.js';

export const offsetFetchHandler = defineHandler<OffsetFetchRequest, OffsetFetchResponse>({
  apiKey: ApiKey.OFFSET_FETCH,
  minVersion: 0,
  maxVersion: 9,
  handle(context, request) {
    const version = context.apiVersion;
    const coordinator = context.services.groupCoordinator;
    const requireStable = version >= 7 && request.requireStable;
    // A stable fetch waits until this broker is shown to still coordinate the group (fetchStableOffsets).
    const fetch = (
      groupId: string,
      topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null,
      member: { memberId: string; memberEpoch: number } | null = null,
    ): Promise<FetchOffsetsResult> =>
      requireStable
        ? coordinator.fetchStableOffsets(groupId, topics, member)
        : Promise.resolve(coordinator.fetchOffsets(groupId, topics, false, member));
    if (version >= 8) {
      const groups = request.groups.map(async (g) => {
        const member =
          version >= 9 && g.memberId !== null ? { memberId: g.memberId, memberEpoch: g.memberEpoch } : null;
        if (!authorizeGroup(context, AclOperation.DESCRIBE, g.groupId)) {
          return { groupId: g.groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
        }
        const result = await fetch(g.groupId, g.topics, member);
        // As Kafka's handleOffsetFetchRequestFromCoordinator: a group that failed is answered by its error alone.
        if (result.errorCode !== ErrorCode.NONE)
          return { groupId: g.groupId, errorCode: result.errorCode, topics: [] };
        return {
          groupId: g.groupId,
          errorCode: result.errorCode,
          topics: authorizedTopics(context, wireTopics(result), g.topics !== null),
        };
      });
      return Promise.all(groups).then((answered) => ({
        throttleTimeMs: 0,
        topics: [],
        errorCode: 0,
        groups: answered,
      }));
    }
    if (!authorizeGroup(context, AclOperation.DESCRIBE, request.groupId)) {
      // From v2 the error is at the top; v0 and v1 have only the partitions to carry it.
      const failed = ErrorCode.GROUP_AUTHORIZATION_FAILED;
      return {
        throttleTimeMs: 0,
        errorCode: version >= 2 ? failed : 0,
        topics:
          version >= 2
            ? []
            : (request.topics ?? []).map((t) => ({
                name: t.name,
                partitions: t.partitionIndexes.map((partitionIndex) => ({
                  partitionIndex,
                  committedOffset: -1n,
                  committedLeaderEpoch: -1,
                  metadata: null,
                  errorCode: failed,
                })),
              })),
        groups: [],
      };
    }
    if (version === 0) return fetchFromStore(context, request.groupId, request.topics ?? []);
    return fetch(request.groupId, request.topics).then((result) => {
      // v1 reports a coordinator error in every partition asked for, having nowhere else to put it; from v2 it is
      // at the top alone, with no partitions (Kafka's OffsetFetchResponse for one group copies the failed group's
      // topics, which KafkaApis leaves empty). Deliberately unlike Kafka 3.9 at v0-v1: there the same empty topics
      // leave the answer with no partitions and no error, so an old client finds its partitions missing; Brook
      // keeps the per-partition error of Kafka 2.x's OffsetFetchRequest.getErrorResponse.
      const failed = version >= 2 && result.errorCode !== ErrorCode.NONE;
      return {
        throttleTimeMs: 0,
        errorCode: version >= 2 ? result.errorCode : 0,
        topics: failed ? [] : authorizedTopics(context, wireTopics(result), request.topics !== null),
        groups: [],
      };
    });
  },
});

/**
 * Kafka's check: DESCRIBE on each topic. A topic asked for by name answers TOPIC_AUTHORIZATION_FAILED in its
 * partitions; when all were asked for, a topic the principal may not describe is left out.
 */
function authorizedTopics(
  context: RequestContext,
  topics: OffsetFetchResponseOffsetFetchResponseTopic[],
  named: boolean,
): OffsetFetchResponseOffsetFetchResponseTopic[] {
  if (context.services.authorizer === null) return topics;
  const out: OffsetFetchResponseOffsetFetchResponseTopic[] = [];
  for (const t of topics) {
    if (authorizeTopic(context, AclOperation.DESCRIBE, t.name)) out.push(t);
    else if (named) {
      out.push({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          committedOffset: -1n,
          committedLeaderEpoch: -1,
          metadata: null,
          errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        })),
      });
    }
  }
  return out;
}

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

/**
 * Version 0 (Kafka's handleOffsetFetchRequestFromZookeeper): each partition's offset from the coordination store.
 * A partition the metadata does not know, or with no offset there, answers UNKNOWN_TOPIC_OR_PARTITION; one of a
 * topic the principal may not describe, TOPIC_AUTHORIZATION_FAILED.
 */
async function fetchFromStore(
  context: RequestContext,
  groupId: string,
  topics: readonly { name: string; partitionIndexes: readonly number[] }[],
): Promise<OffsetFetchResponse> {
  const { metadata, zooKeeperConsumerOffsets } = context.services;
  const answered = await Promise.all(
    topics.map(async (t) => ({
      name: t.name,
      partitions: await Promise.all(
        t.partitionIndexes.map(async (partitionIndex) => {
          const answer = (errorCode: number, committedOffset = -1n) => ({
            partitionIndex,
            committedOffset,
            committedLeaderEpoch: -1,
            metadata: '',
            errorCode,
          });
          if (!authorizeTopic(context, AclOperation.DESCRIBE, t.name))
            return answer(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          if (metadata.partition(t.name, partitionIndex) === undefined)
            return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          const stored = await zooKeeperConsumerOffsets.fetch(groupId, t.name, partitionIndex);
          if (!stored.ok) return answer(ErrorCode.UNKNOWN_SERVER_ERROR);
          if (stored.value === null) return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          return answer(ErrorCode.NONE, stored.value);
        }),
      ),
    })),
  );
  return { throttleTimeMs: 0, errorCode: 0, topics: answered, groups: [] };
}
