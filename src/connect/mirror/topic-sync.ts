// What MirrorSourceConnector keeps in step on the target besides records: topics created with the source's partition
// count and topic configs (always, as Kafka creates them), partitions added when the source gains some,
// (sync.topic.configs.enabled) the source's topic configs written again on every sync, and
// (sync.topic.acls.enabled) the source's topic ACLs that grant reading, as Kafka's connector does: ALLOW ... WRITE
// is never copied (only MirrorMaker writes remote topics) and ALLOW ... ALL becomes READ.

import type { Admin } from '../../client/index.js';
import type { Logger } from '../../common/logger.js';
import type { MirrorConfig, MirrorFilters } from './mirror-config.js';

// Kafka's ACL codes (ResourceType TOPIC, PatternType ANY/LITERAL, AclOperation ANY/ALL/READ/WRITE, permission).
const RESOURCE_TOPIC = 2;
const PATTERN_ANY = 1;
const PATTERN_LITERAL = 3;
const OP_ANY = 1;
const OP_ALL = 2;
const OP_READ = 3;
const OP_WRITE = 4;
const PERMISSION_ANY = 1;
const PERMISSION_ALLOW = 3;

type AclBinding = Parameters<Admin['createAcls']>[0][number];

export interface SourcePartitions {
  /** Source topic -> partition count, for the topics this flow mirrors. */
  topics: Map<string, number>;
}

export async function listSourcePartitions(source: Admin, filters: MirrorFilters): Promise<SourcePartitions> {
  const names = (await source.listTopics()).filter((t) => filters.shouldReplicateTopic(t));
  const topics = new Map<string, number>();
  if (names.length === 0) return { topics };
  for (const d of await source.describeTopics(names)) {
    if (d.error === null && d.partitions.length > 0) topics.set(d.topic, d.partitions.length);
  }
  return { topics };
}

/**
 * A source topic's configs as Kafka's MirrorSourceConnector.targetConfig sorts them (read-only, sensitive and
 * config.properties.exclude'd entries left out): the values that are not the built-in default, set on the topic
 * or dynamically for the source's brokers (a cluster-wide log.retention.ms set with kafka-configs is the topic's
 * retention too, so the copy gets it), to be set on the remote topic; and the names at their default on the
 * source, whose override the periodic sync deletes from the remote topic (Kafka's incremental sync with
 * use.defaults.from=target), so that an override removed on the source does not live on in the copy. Values from
 * the source brokers' static files (STATIC_BROKER_CONFIG) are neither set nor deleted, as in Kafka.
 */
export interface TopicConfigs {
  set: Record<string, string>;
  defaults: string[];
}

export async function sourceTopicConfigs(
  source: Admin,
  filters: MirrorFilters,
  topics: string[],
): Promise<Map<string, TopicConfigs>> {
  const out = new Map<string, TopicConfigs>();
  if (topics.length === 0) return out;
  const results = await source.describeConfigs(topics.map((name) => ({ type: 'topic' as const, name })));
  for (const r of results) {
    if (r.error !== null) continue;
    const configs: TopicConfigs = { set: {}, defaults: [] };
    for (const c of r.configs) {
      if (c.readOnly || c.isSensitive || !filters.shouldReplicateConfig(c.name)) continue;
      if (c.isDefault) configs.defaults.push(c.name);
      else if (c.source !== 'STATIC_BROKER_CONFIG' && c.value !== null) configs.set[c.name] = c.value;
    }
    out.set(r.name, configs);
  }
  return out;
}

export class TopicSync {
  constructor(
    private readonly c: MirrorConfig,
    private readonly filters: MirrorFilters,
    private readonly source: Admin,
    private readonly target: Admin,
    /** MirrorSourceConnector's logger: Kafka's connector writes these lines. */
    private readonly log: Logger,
  ) {}

  remote(topic: string): string {
    return this.c.policy.formatRemoteTopic(this.c.sourceAlias, topic);
  }

  /** Creates missing remote topics and adds missing partitions. */
  async createTopicsAndPartitions(wanted: SourcePartitions): Promise<void> {
    const existing = new Map<string, number>();
    const remotes = [...wanted.topics.keys()].map((t) => this.remote(t));
    if (remotes.length === 0) return;
    for (const d of await this.target.describeTopics(remotes)) {
      if (d.error === null) existing.set(d.topic, d.partitions.length);
    }
    const toCreate = [...wanted.topics].filter(([t]) => !existing.has(this.remote(t)));
    if (toCreate.length > 0) {
      // Kafka's createNewTopics copies the source's configs whatever sync.topic.configs.enabled says: without
      // them a compacted or never-expiring topic would be copied into one with the target's delete policy and
      // retention, and lose records the source keeps.
      const configs = await sourceTopicConfigs(
        this.source,
        this.filters,
        toCreate.map(([t]) => t),
      );
      const rf = await this.replicationFactor();
      const results = await this.target.createTopics(
        toCreate.map(([t, n]) => ({
          topic: this.remote(t),
          numPartitions: n,
          replicationFactor: rf,
          configs: configs.get(t)?.set ?? {},
        })),
      );
      for (const r of results) {
        if (r.error !== null && r.error.code !== 36 /* TOPIC_ALREADY_EXISTS */)
          this.log.warn(`Could not create topic ${r.topic} on ${this.c.targetAlias}: ${r.error.message}`);
        else this.log.info(`Created remote topic ${r.topic} with ${r.numPartitions} partitions`);
      }
    }
    const grow = [...wanted.topics].filter(([t, n]) => (existing.get(this.remote(t)) ?? n) < n);
    if (grow.length > 0) {
      const results = await this.target.createPartitions(
        grow.map(([t, n]) => ({ topic: this.remote(t), count: n })),
      );
      for (const r of results) {
        if (r.error !== null) this.log.warn(`Could not add partitions to ${r.topic}: ${r.error.message}`);
        else
          this.log.info(`Increased ${r.topic} to ${wanted.topics.get(this.upstreamOf(r.topic))} partitions`);
      }
    }
  }

  private upstreamOf(remote: string): string {
    return this.c.policy.upstreamTopic(remote) ?? remote;
  }

  /** replication.factor, or the target's default when the target has fewer brokers (a development cluster). */
  private async replicationFactor(): Promise<number> {
    const rf = this.c.int('replication.factor');
    const brokers = (await this.target.describeCluster()).brokers.length;
    if (rf > brokers) {
      this.log.warn(
        `replication.factor=${rf} exceeds the ${brokers} broker(s) of ${this.c.targetAlias}; using its default`,
      );
      return -1;
    }
    return rf;
  }

  /**
   * Writes the source's configs to the remote topics (TopicConfigs: the source's overrides set, the overrides of
   * configs at their default on the source deleted) on every run, whether or not the source changed, as Kafka's
   * MirrorSourceConnector.syncTopicConfigs does: an edit made on the target is undone by the next sync, so the copy
   * keeps the source's retention and cleanup policy.
   */
  async syncTopicConfigs(topics: string[]): Promise<void> {
    const configs = await sourceTopicConfigs(this.source, this.filters, topics);
    const changes = [...configs]
      .map(([t, cfg]) => ({
        type: 'topic' as const,
        name: this.remote(t),
        ops: [
          ...Object.entries(cfg.set).map(([name, value]) => ({ name, op: 'set' as const, value })),
          ...cfg.defaults.map((name) => ({ name, op: 'delete' as const })),
        ],
      }))
      .filter((change) => change.ops.length > 0);
    if (changes.length === 0) return;
    // One request for every topic, as Kafka sends it; a topic refused is logged and retried on the next run.
    for (const r of await this.target.incrementalAlterConfigs(changes)) {
      if (r.error) this.log.warn(`Could not alter configuration of topic ${r.name}: ${r.error.message}`);
    }
    this.log.debug(`Synced the configs of ${changes.length} topic(s)`);
  }

  /** Copies the topic ACLs that allow reading mirrored topics. */
  async syncTopicAcls(topics: Set<string>): Promise<void> {
    let bindings: AclBinding[];
    try {
      bindings = await this.source.describeAcls({
        resourceType: RESOURCE_TOPIC,
        name: null,
        patternType: PATTERN_ANY,
        principal: null,
        host: null,
        operation: OP_ANY,
        permissionType: PERMISSION_ANY,
      });
    } catch (err) {
      // A cluster without an authorizer answers SECURITY_DISABLED: nothing to copy.
      if ((err as { code?: number }).code === 54) return;
      throw err;
    }
    const out: AclBinding[] = [];
    for (const b of bindings) {
      if (b.pattern.patternType !== PATTERN_LITERAL || !topics.has(b.pattern.name)) continue;
      if (b.entry.permissionType === PERMISSION_ALLOW && b.entry.operation === OP_WRITE) continue;
      const operation =
        b.entry.permissionType === PERMISSION_ALLOW && b.entry.operation === OP_ALL
          ? OP_READ
          : b.entry.operation;
      out.push({
        pattern: { ...b.pattern, name: this.remote(b.pattern.name) },
        entry: { ...b.entry, operation },
      });
    }
    if (out.length === 0) return;
    const errors = await this.target.createAcls(out);
    const failed = errors.filter((e) => e !== null);
    if (failed.length > 0) this.log.warn(`Could not sync ${failed.length} ACL(s): ${failed[0]!.message}`);
  }
}
