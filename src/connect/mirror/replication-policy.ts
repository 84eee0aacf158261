// Replication policies (Kafka's org.apache.kafka.connect.mirror.ReplicationPolicy): how a topic mirrored from
// cluster A is named on the target, how a mirrored topic's origin is recognised (so that A->B->A cycles are not
// mirrored back), and the names of MirrorMaker's internal topics. DefaultReplicationPolicy names remote topics
// `A.topic` (separator from replication.policy.separator); IdentityReplicationPolicy keeps names, for
// migrations, and so cannot detect cycles except on heartbeats topics, which it still prefixes.

import { ConfigException } from '../errors.js';

export const HEARTBEATS_TOPIC = 'heartbeats';

export interface ReplicationPolicy {
  /** The target cluster's name for `topic` of cluster `sourceAlias`. */
  formatRemoteTopic(sourceAlias: string, topic: string): string;
  /** The cluster a remote topic came from, or null for a topic that was not mirrored (as far as it can tell). */
  topicSource(topic: string): string | null;
  /** The name of a remote topic on the cluster it came from, or null. */
  upstreamTopic(topic: string): string | null;
  /** The topic's name on the cluster it was first written to, every cluster prefix taken off. */
  originalTopic(topic: string): string;
  offsetSyncsTopic(clusterAlias: string): string;
  checkpointsTopic(clusterAlias: string): string;
  heartbeatsTopic(): string;
  isInternalTopic(topic: string): boolean;
  /** Whether the topic is a heartbeats topic, local (`heartbeats`) or mirrored (`A.heartbeats`). */
  isHeartbeatsTopic(topic: string): boolean;
}

export class DefaultReplicationPolicy implements ReplicationPolicy {
  static readonly className: string = 'org.apache.kafka.connect.mirror.DefaultReplicationPolicy';

  constructor(readonly separator = '.') {
    if (separator === '')
      throw ConfigException.invalid('replication.policy.separator', '', 'must not be empty');
  }

  formatRemoteTopic(sourceAlias: string, topic: string): string {
    return `${sourceAlias}${this.separator}${topic}`;
  }

  topicSource(topic: string): string | null {
    const at = topic.indexOf(this.separator);
    return at <= 0 ? null : topic.slice(0, at);
  }

  upstreamTopic(topic: string): string | null {
    const source = this.topicSource(topic);
    return source === null ? null : topic.slice(source.length + this.separator.length);
  }

  /** The topic with every cluster prefix taken off (`B.A.t` -> `t`). */
  originalTopic(topic: string): string {
    let t = topic;
    for (let up = this.upstreamTopic(t); up !== null && up !== t; up = this.upstreamTopic(t)) t = up;
    return t;
  }

  offsetSyncsTopic(clusterAlias: string): string {
    return `mm2-offset-syncs${this.separatorForInternal()}${clusterAlias}.internal`;
  }

  checkpointsTopic(clusterAlias: string): string {
    return `${clusterAlias}${this.separatorForInternal()}checkpoints.internal`;
  }

  heartbeatsTopic(): string {
    return HEARTBEATS_TOPIC;
  }

  isInternalTopic(topic: string): boolean {
    const mm2Internal = topic.startsWith('mm2') && topic.endsWith('.internal');
    return (
      mm2Internal ||
      topic.endsWith('.checkpoints.internal') ||
      topic.startsWith('__') ||
      topic.startsWith('.') ||
      topic.endsWith('-internal') ||
      topic.endsWith('.internal')
    );
  }

  isHeartbeatsTopic(topic: string): boolean {
    return this.originalTopic(topic) === HEARTBEATS_TOPIC;
  }

  /**
   * Kafka names internal topics with the separator only when replication.policy.internal.topic.separator.enabled
   * (default true); with '.', the default, both spellings agree.
   */
  protected separatorForInternal(): string {
    return this.separator;
  }
}

export class IdentityReplicationPolicy extends DefaultReplicationPolicy {
  static override readonly className = 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy';

  /** Kafka's optional `source.cluster.alias` of the policy: the origin reported for every non-heartbeat topic. */
  constructor(
    separator = '.',
    private readonly sourceAlias: string | null = null,
  ) {
    super(separator);
  }

  override formatRemoteTopic(sourceAlias: string, topic: string): string {
    return this.looksLikeHeartbeat(topic) ? super.formatRemoteTopic(sourceAlias, topic) : topic;
  }

  override topicSource(topic: string): string | null {
    return this.looksLikeHeartbeat(topic) ? super.topicSource(topic) : this.sourceAlias;
  }

  override upstreamTopic(topic: string): string | null {
    return this.looksLikeHeartbeat(topic) ? super.upstreamTopic(topic) : topic;
  }

  override originalTopic(topic: string): string {
    return this.looksLikeHeartbeat(topic) ? super.originalTopic(topic) : topic;
  }

  private looksLikeHeartbeat(topic: string): boolean {
    return topic === HEARTBEATS_TOPIC || topic.endsWith(`${this.separator}${HEARTBEATS_TOPIC}`);
  }
}

const DEFAULT_NAMES = [DefaultReplicationPolicy.className, 'DefaultReplicationPolicy'];
const IDENTITY_NAMES = [IdentityReplicationPolicy.className, 'IdentityReplicationPolicy'];

/** The policy a config names (replication.policy.class, replication.policy.separator). */
export function replicationPolicyFrom(props: Readonly<Record<string, string>>): ReplicationPolicy {
  const className = (props['replication.policy.class'] ?? DefaultReplicationPolicy.className).trim();
  const separator = props['replication.policy.separator'] ?? '.';
  if (DEFAULT_NAMES.includes(className)) return new DefaultReplicationPolicy(separator);
  if (IDENTITY_NAMES.includes(className)) {
    const alias = props['replication.policy.source.cluster.alias'] ?? null;
    return new IdentityReplicationPolicy(separator, alias);
  }
  throw ConfigException.invalid(
    'replication.policy.class',
    className,
    `Class ${className} could not be found (Brook has ${DEFAULT_NAMES[0]} and ${IDENTITY_NAMES[0]})`,
  );
}
