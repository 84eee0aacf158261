// DeleteTopics (20): by name, or from v6 by topic id. The controller's topic administration marks the topics
// for deletion and answers, as Kafka does, once this broker's metadata no longer has them (the controller has
// told the brokers; replicas are deleted after), or REQUEST_TIMED_OUT for those still there when the request's
// timeout_ms passes (the deletion goes on); a timeout of 0 or less answers at once, REQUEST_TIMED_OUT for every
// topic marked, as Kafka does.

import { ErrorCode } from '../../protocol/errors.js';
import type {
  DeleteTopicsRequest,
  DeleteTopicsResponse,
  DeleteTopicsResponseDeletableTopicResult,
} from '../../protocol/messages/20-delete-topics.js';
import { ZERO_UUID } from '../../protocol/messages/codec-support.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeTopic } from '../authorization.js';
import { mutationQuota, THROTTLING_QUOTA_EXCEEDED_MESSAGE } from '../quota/controller-mutations.js';

export const deleteTopicsHandler = defineHandler<DeleteTopicsRequest, DeleteTopicsResponse>({
  apiKey: ApiKey.DELETE_TOPICS,
  minVersion: 0,
  maxVersion: 6,
  async handle(context, request) {
    const { topicAdmin, metadata } = context.services;
    const wanted =
      context.apiVersion >= 6
        ? request.topics.map((t) => ({ name: t.name, topicId: t.topicId }))
        : request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
    const responses: DeleteTopicsResponseDeletableTopicResult[] = [];
    /** Each topic by name, with the id the request gave (zero when named) and whether it was named by id. */
    const named: { name: string; requestTopicId: string; byId: boolean }[] = [];
    for (const w of wanted) {
      // As Kafka: by name unless an id is given (v6 sends an empty name with it); an empty name alone is a name
      // no topic has, so it gets UNKNOWN_TOPIC_OR_PARTITION.
      if (w.name !== null && (w.name !== '' || w.topicId === ZERO_UUID)) {
        named.push({ name: w.name, requestTopicId: w.topicId, byId: false });
        continue;
      }
      const topic = metadata.topicById(w.topicId);
      if (topic === undefined) {
        responses.push({
          name: null,
          topicId: w.topicId,
          errorCode: ErrorCode.UNKNOWN_TOPIC_ID,
          errorMessage: null,
        });
      } else {
        named.push({ name: topic.name, requestTopicId: w.topicId, byId: true });
      }
    }
    // Kafka's checks: a topic named by id needs DESCRIBE, else it is refused without its name (the id itself is
    // not secret); then DELETE on each topic. A refused topic answers only what the request gave: its id from the
    // metadata would tell a principal that may not describe it that it exists.
    const allowed: string[] = [];
    // Each deleted partition is a mutation (KIP-599); a topic refused by the quota is not deleted.
    const quota = mutationQuota(context, 5);
    for (const { name, requestTopicId, byId } of named) {
      if (byId && !authorizeTopic(context, AclOperation.DESCRIBE, name)) {
        responses.push({
          name: null,
          topicId: requestTopicId,
          errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
          errorMessage: null,
        });
      } else if (!authorizeTopic(context, AclOperation.DELETE, name)) {
        responses.push({
          name,
          topicId: requestTopicId,
          errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
          errorMessage: null,
        });
      } else if (quota.record(metadata.topic(name)?.partitions.length ?? 0)) allowed.push(name);
      else {
        responses.push({
          name,
          topicId: metadata.topic(name)?.topicId ?? ZERO_UUID,
          errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED,
          errorMessage: THROTTLING_QUOTA_EXCEEDED_MESSAGE,
        });
      }
    }
    for (const r of await topicAdmin.deleteTopics(allowed, request.timeoutMs)) {
      responses.push({
        name: r.name,
        topicId: r.topicId,
        errorCode: r.errorCode,
        errorMessage: r.errorMessage,
      });
    }
    quota.finish();
    return { throttleTimeMs: 0, responses };
  },
});
