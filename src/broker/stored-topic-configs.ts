// Reading topics' config overrides from the coordination store (/config/topics/<topic>) into TopicConfigs: for
// the controller's requests (controller-requests.ts), and at start for the topics whose logs are on disk, before
// the log manager opens them (broker.ts loadLogs), as Kafka's LogManager reads every topic's overrides
// (fetchTopicConfigOverrides) before loading the logs.

import type { CoordinationStore } from '../controller/store/store.js';
import { decodeEntityConfig, topicConfigPath } from '../controller/zk-layout/index.js';
import type { TopicConfigs } from './topic-configs.js';

/** A topic whose config node could not be read, and why (a store error name, or the exception's message). */
export interface UnreadTopic {
  readonly topic: string;
  readonly reason: string;
  /**
   * The node was read, and its document refused: a value that is not a string, on which Kafka's
   * ConfigEntityZNode.decode throws. Reading it again gives the same answer until someone writes the node.
   */
  readonly refused: boolean;
}

/**
 * Reads each topic's overrides, all at once, and sets them in `topicConfigs` (a topic without a node has none, as
 * Kafka's getEntityConfigs answers empty properties for NONODE; so has one whose data is not a JSON object, as its
 * decode reads it). A read that fails (or throws), or a document refused, says nothing about the topic: it is left
 * as it was, and it is in the answer with the reason. Taking a refused document for no overrides would open the
 * topic's logs on the broker's defaults (a topic kept forever under the 7-day retention).
 */
export async function readTopicOverrides(
  store: CoordinationStore,
  topics: Iterable<string>,
  topicConfigs: TopicConfigs,
): Promise<UnreadTopic[]> {
  const names = [...topics];
  const nodes = await Promise.all(
    names.map((topic) =>
      store
        .get(topicConfigPath(topic))
        .catch((err: unknown) => (err instanceof Error ? err.message : String(err))),
    ),
  );
  const unread: UnreadTopic[] = [];
  for (const [i, node] of nodes.entries()) {
    const topic = names[i]!;
    if (typeof node === 'string') {
      unread.push({ topic, reason: node, refused: false });
      continue;
    }
    if (!node.ok && node.code !== 'NONODE') {
      unread.push({ topic, reason: node.code, refused: false });
      continue;
    }
    const decoded = node.ok ? decodeEntityConfig(node.value.data) : null;
    if (decoded !== null && !decoded.ok) {
      unread.push({ topic, reason: decoded.error.message, refused: true });
      continue;
    }
    topicConfigs.setOverrides(topic, new Map(decoded === null ? [] : Object.entries(decoded.value)));
  }
  return unread;
}
