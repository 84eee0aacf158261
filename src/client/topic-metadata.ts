// The consumer's partitionsFor() and listTopics(), as Kafka's TopicMetadataFetcher answers them: one Metadata
// request to any broker, asked again after a retriable topic error or a failed request until the call's deadline
// (default.api.timeout.ms unless the call gives one). A topic the cluster does not have is left out; a topic the
// client may not describe, an invalid name or any other error fails the call. Stateless: the cluster's metadata
// cache takes the answer as any other Metadata answer.

import { ErrorCode } from '../protocol/errors.js';
import type { Cluster, PartitionInfo } from './cluster.js';
import { CallTimeoutError, KafkaClientError, KafkaProtocolError, RequestTimeoutError } from './errors.js';

/**
 * The partitions of each topic the cluster has among `topics` (null: every topic, internal ones included, as
 * Kafka's listTopics), retried until `deadlineMs`; then RequestTimeoutError with Kafka's message.
 */
export async function topicPartitions(
  cluster: Cluster,
  topics: string[] | null,
  deadlineMs: number,
): Promise<Map<string, PartitionInfo[]>> {
  try {
    return await cluster.withRetry(
      () => topicPartitionsOnce(cluster, topics),
      Number.POSITIVE_INFINITY,
      deadlineMs,
    );
  } catch (err) {
    if (!(err instanceof CallTimeoutError)) throw err;
    throw new RequestTimeoutError('Timeout expired while fetching topic metadata', { cause: err.cause });
  }
}

async function topicPartitionsOnce(
  cluster: Cluster,
  topics: string[] | null,
): Promise<Map<string, PartitionInfo[]>> {
  const snapshot = await cluster.fetchMetadata(topics);
  const all = [...snapshot.topics.values()];
  const unauthorized = all
    .filter((t) => t.errorCode === ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    .map((t) => t.name);
  if (unauthorized.length > 0) {
    throw new KafkaProtocolError(
      ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      `Not authorized to access topics: [${unauthorized.join(', ')}]`,
    );
  }
  let retriable: KafkaProtocolError | null = null;
  for (const t of all) {
    if (t.errorCode === ErrorCode.NONE || t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) continue;
    if (t.errorCode === ErrorCode.INVALID_TOPIC_EXCEPTION)
      throw new KafkaProtocolError(t.errorCode, `Topic '${t.name}' is invalid`);
    const err = new KafkaProtocolError(t.errorCode, `topic ${t.name}`);
    if (!err.retriable)
      throw new KafkaClientError(`Unexpected error fetching metadata for topic ${t.name}`, false, {
        cause: err,
      });
    retriable = err;
  }
  if (retriable !== null) throw retriable;
  return new Map(
    all.filter((t) => t.errorCode === ErrorCode.NONE).map((t) => [t.name, t.partitions] as const),
  );
}
