// Kafka's rule for OffsetCommit and TxnOffsetCommit (KafkaApis, 3.x): a partition of a topic the metadata does not
// know, or a partition the topic does not have, is answered UNKNOWN_TOPIC_OR_PARTITION and nothing is written for
// it; the other partitions go to the group coordinator. Admin clients' AlterConsumerGroupOffsets is an OffsetCommit
// and follows the same rule.

import type { PartitionErrors, TopicPartitions } from '../../coordinator/group/group-api.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { RequestContext } from '../api-handler.js';
import { AclOperation, authorizeTopic } from '../authorization.js';
import type { MetadataCache } from '../metadata/metadata-cache.js';

/**
 * Calls `commit` with the known partitions only (not at all when there are none) and answers every partition of
 * `topics`, in request order.
 */
export async function commitKnownPartitions<P extends { readonly partitionIndex: number }>(
  metadata: MetadataCache,
  topics: readonly TopicPartitions<P>[],
  commit: (known: TopicPartitions<P>[]) => Promise<PartitionErrors>,
): Promise<PartitionErrors> {
  const known: TopicPartitions<P>[] = [];
  for (const t of topics) {
    const partitions = t.partitions.filter((p) => metadata.partition(t.name, p.partitionIndex) !== undefined);
    if (partitions.length > 0) known.push({ name: t.name, partitions });
  }
  const answered = new Map<string, number>();
  if (known.length > 0) {
    for (const t of await commit(known))
      for (const p of t.partitions) answered.set(`${t.name}\u0000${p.partitionIndex}`, p.errorCode);
  }
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({
      partitionIndex: p.partitionIndex,
      errorCode: answered.get(`${t.name}\u0000${p.partitionIndex}`) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    })),
  }));
}

/** Every partition of `topics` answered with one error code. */
export function failAll(
  topics: readonly { name: string; partitions: readonly { partitionIndex: number }[] }[],
  errorCode: number,
): PartitionErrors {
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
  }));
}

/**
 * Kafka's per-topic check of offset commits: READ on each topic. `commit` gets the readable topics; the others are
 * answered TOPIC_AUTHORIZATION_FAILED, all in request order.
 */
export async function commitReadableTopics<
  T extends { name: string; partitions: readonly { partitionIndex: number }[] },
>(
  context: RequestContext,
  requested: readonly T[],
  commit: (allowed: T[]) => Promise<PartitionErrors>,
): Promise<PartitionErrors> {
  const denied = requested.filter((t) => !authorizeTopic(context, AclOperation.READ, t.name));
  const allowed = denied.length === 0 ? [...requested] : requested.filter((t) => !denied.includes(t));
  const committed = await commit(allowed);
  if (denied.length === 0) return committed;
  const refused = failAll(denied, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  return requested.map((t) =>
    denied.includes(t) ? refused[denied.indexOf(t)]! : committed[allowed.indexOf(t)]!,
  );
}
