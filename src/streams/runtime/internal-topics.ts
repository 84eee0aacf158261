// The application's own topics, created by the application at start as Kafka Streams creates them:
// `<application.id>-<name>-repartition` (cleanup.policy=delete, unlimited retention; Streams' consumers read
// them to the end) with as many partitions as the sub-topology writing them has tasks, and
// `<application.id>-<store>-changelog` (cleanup.policy=compact) with one partition per task of the store's
// sub-topology. A task count is the largest partition count among its sub-topology's input topics.
//
// A topic's configs are layered as Kafka's InternalTopicConfig.properties layers them: the library's defaults
// below, then the application's `topic.`-prefixed properties (StreamsConfig.topicPrefix, for every internal
// topic), then the store's own log config. A window or session changelog's retention.ms is the store's
// retention plus windowstore.changelog.additional.retention.ms unless the store's own log config names one.

import type { Admin } from '../../client/admin.js';
import { StreamsError } from '../errors.js';
import type { Topology } from '../topology.js';

const REPARTITION_CONFIGS: Record<string, string> = {
  'cleanup.policy': 'delete',
  'segment.bytes': '52428800',
  'retention.ms': '-1',
  'message.timestamp.type': 'CreateTime',
};

const CHANGELOG_CONFIGS: Record<string, string> = {
  'cleanup.policy': 'compact',
  'message.timestamp.type': 'CreateTime',
};

const SOURCE_TOPIC_WAIT_MS = 30_000;
const TOPIC_RETRY_MS = 250;

export interface TopicLayout {
  /** Real topic name -> partition count, for every topic the application reads or owns. */
  partitions: Map<string, number>;
  /** Sub-topology id -> number of tasks. */
  tasksPerSubtopology: Map<number, number>;
}

export function repartitionTopicName(applicationId: string, topic: string): string {
  return `${applicationId}-${topic}`;
}

export function changelogTopicName(applicationId: string, store: string): string {
  return `${applicationId}-${store}-changelog`;
}

/** Reads the partition counts of the input topics, waiting a while for topics not created yet. */
async function sourcePartitions(admin: Admin, topics: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const deadline = Date.now() + SOURCE_TOPIC_WAIT_MS;
  for (;;) {
    const missing = topics.filter((t) => !out.has(t));
    if (missing.length === 0) return out;
    for (const d of await admin.describeTopics(missing))
      if (d.error === null && d.partitions.length > 0) out.set(d.topic, d.partitions.length);
    if (out.size === topics.length) return out;
    if (Date.now() > deadline)
      throw new StreamsError(
        `Missing source topics: ${topics.filter((t) => !out.has(t)).join(', ')} (MissingSourceTopicException)`,
      );
    await new Promise((r) => setTimeout(r, TOPIC_RETRY_MS));
  }
}

/** Works out every partition count, then creates the internal topics that do not exist yet. */
export async function ensureInternalTopics(
  admin: Admin,
  topology: Topology,
  applicationId: string,
  replicationFactor: number,
  windowChangelogAdditionalRetentionMs = 86_400_000,
  topicConfigs: Record<string, string> = {},
): Promise<TopicLayout> {
  // Global stores' sub-topologies make no tasks and own no internal topics; their topics are read whole.
  const subtopologies = topology.subtopologies().filter((st) => !st.global);
  const internal = topology.internalTopics;
  const external = topology.sourceTopics().filter((t) => !internal.has(t));
  const partitions = await sourcePartitions(admin, [...external, ...topology.globalTopics()]);
  const logical = new Map<string, number>(partitions);
  // A repartition topic has as many partitions as its writer has tasks; writers may read other repartition
  // topics, so repeat until every count is known (the graph of sub-topologies has no cycles).
  for (let round = 0; round <= subtopologies.length; round++) {
    for (const st of subtopologies) {
      const counts = st.sourceTopics.map((t) => logical.get(t));
      if (counts.some((c) => c === undefined)) continue;
      const tasks = Math.max(...(counts as number[]));
      for (const sink of st.sinkTopics) {
        const fixed = internal.get(sink) ?? -1;
        logical.set(sink, fixed > 0 ? fixed : tasks);
      }
    }
  }
  // Co-partitioning (joins): the external input topics of such a sub-topology must agree on their partition
  // count, and its repartition topics take that count, as Kafka's CopartitionedTopicsEnforcer does.
  for (const st of subtopologies) {
    if (!st.nodes.some((n) => topology.copartitioned.has(n))) continue;
    const externals = st.sourceTopics.filter((t) => !internal.has(t));
    const counts = new Set(externals.map((t) => logical.get(t)));
    if (counts.size > 1)
      throw new StreamsError(
        `Topics not co-partitioned: [${externals.map((t) => `${t}(${logical.get(t)})`).join(', ')}]`,
      );
    if (externals.length > 0) {
      const n = logical.get(externals[0]!)!;
      for (const t of st.sourceTopics) if (internal.has(t) && (internal.get(t) ?? -1) <= 0) logical.set(t, n);
    }
  }
  const tasksPerSubtopology = new Map<number, number>();
  for (const st of subtopologies) {
    const counts = st.sourceTopics.map((t) => logical.get(t));
    if (counts.some((c) => c === undefined))
      throw new StreamsError(`cannot work out the partitions of sub-topology ${st.id}'s input topics`);
    tasksPerSubtopology.set(st.id, Math.max(...(counts as number[])));
  }

  const wanted: { topic: string; numPartitions: number; configs: Record<string, string> }[] = [];
  for (const topic of internal.keys()) {
    wanted.push({
      topic: repartitionTopicName(applicationId, topic),
      numPartitions: logical.get(topic)!,
      configs: { ...REPARTITION_CONFIGS, ...topicConfigs },
    });
  }
  for (const st of subtopologies) {
    for (const store of st.stores) {
      const builder = topology.stores.get(store)!;
      if (!builder.loggingEnabled) continue;
      // A window or session changelog is deleted by time too: it keeps what the store keeps, plus
      // windowstore.changelog.additional.retention.ms (unless the store's log config names retention.ms; a
      // `topic.retention.ms` does not count, as in Kafka's WindowedChangelogTopicConfig) ...
      const storeRetentionMs = builder.window?.retentionMs ?? builder.session?.retentionMs;
      const windowed = storeRetentionMs !== undefined;
      const retention: Record<string, string> =
        windowed && builder.logConfig['retention.ms'] === undefined
          ? { 'retention.ms': String(storeRetentionMs + windowChangelogAdditionalRetentionMs) }
          : {};
      // ... and compacted as well by default (the library's default of such changelogs).
      const policy: Record<string, string> = windowed ? { 'cleanup.policy': 'compact,delete' } : {};
      wanted.push({
        topic: changelogTopicName(applicationId, store),
        numPartitions: tasksPerSubtopology.get(st.id)!,
        configs: { ...CHANGELOG_CONFIGS, ...policy, ...topicConfigs, ...builder.logConfig, ...retention },
      });
    }
  }
  const real = new Map<string, number>();
  for (const [t, n] of logical) real.set(internal.has(t) ? repartitionTopicName(applicationId, t) : t, n);
  if (wanted.length > 0) {
    const existing = new Map<string, number>();
    for (const d of await admin.describeTopics(wanted.map((w) => w.topic)))
      if (d.error === null && d.partitions.length > 0) existing.set(d.topic, d.partitions.length);
    const toCreate = wanted.filter((w) => !existing.has(w.topic));
    for (const w of wanted) {
      const have = existing.get(w.topic);
      if (have !== undefined && have !== w.numPartitions)
        throw new StreamsError(
          `Existing internal topic ${w.topic} has ${have} partitions, ${w.numPartitions} expected (reset the application)`,
        );
    }
    if (toCreate.length > 0) {
      const results = await admin.createTopics(
        toCreate.map((w) => ({
          topic: w.topic,
          numPartitions: w.numPartitions,
          replicationFactor,
          configs: w.configs,
        })),
      );
      for (const r of results)
        if (r.error !== null && r.error.code !== 36 /* TOPIC_ALREADY_EXISTS */)
          throw new StreamsError(`could not create internal topic ${r.topic}: ${r.error.message}`);
    }
    for (const w of wanted) real.set(w.topic, w.numPartitions);
  }
  return { partitions: real, tasksPerSubtopology };
}
