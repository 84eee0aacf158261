// The runtime keys its maps by partition as the string "topic:partition" (consumed and committed offsets,
// changelog offsets, checkpoints, the global thread's positions). These two build and read that key, so the
// format lives in one place. A topic name cannot contain ':' (Kafka's legal characters are letters, digits, '.',
// '_' and '-'), yet the parse splits at the last ':', which the partition number never contains.

import type { TopicPartition } from '../../client/requests.js';

export function partitionKey(tp: TopicPartition): string {
  return `${tp.topic}:${tp.partition}`;
}

export function topicPartitionOfKey(key: string): TopicPartition {
  const at = key.lastIndexOf(':');
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
}
