// The keys every Mirror connector reads (Kafka's MirrorConnectorConfig, MirrorSourceConfig,
// MirrorCheckpointConfig, MirrorHeartbeatConfig), with Kafka's defaults, and the clients built from them:
// `source.cluster.` and `target.cluster.` keys (bootstrap.servers and the security keys) give each cluster's
// client settings, as MirrorMaker passes them to the connectors it runs.
//
// Security: the connectors live under src/connect, which imports only the client; the command line installs
// the translation of Kafka's security keys (security.protocol, ssl.*, sasl.*) with setClientSecurity(). Without
// it, only PLAINTEXT clusters can be mirrored.

import type { ClientOptions } from '../../client/index.js';
import { ConfigException } from '../errors.js';
import { type ReplicationPolicy, replicationPolicyFrom } from './replication-policy.js';

export type SecurityResolver = (props: Record<string, string>) => Pick<ClientOptions, 'tls' | 'sasl'>;
let securityResolver: SecurityResolver | null = null;

/** Installs the translation of Kafka's client security keys (called once by the command line). */
export function setClientSecurity(resolver: SecurityResolver | null): void {
  securityResolver = resolver;
}

const SECURITY_PREFIXES = ['security.protocol', 'ssl.', 'sasl.'];

export function isClientSecurityKey(key: string): boolean {
  return SECURITY_PREFIXES.some((p) => key.startsWith(p));
}

/** Kafka's MirrorConnectorConfig defaults (topics.exclude and groups.exclude as in Kafka 3.x). */
export const MIRROR_DEFAULTS: Readonly<Record<string, string>> = {
  // Whether the pair replicates; MirrorMaker writes false for a pair it runs only for heartbeats (mm2-config.ts).
  enabled: 'true',
  topics: '.*',
  'topics.exclude': '.*[\\-\\.]internal, .*\\.replica, __.*',
  groups: '.*',
  'groups.exclude': 'console-consumer-.*, connect-.*, __.*',
  'replication.factor': '2',
  'replication.policy.separator': '.',
  'sync.topic.configs.enabled': 'true',
  'sync.topic.configs.interval.seconds': '600',
  'sync.topic.acls.enabled': 'true',
  'sync.topic.acls.interval.seconds': '600',
  'refresh.topics.enabled': 'true',
  'refresh.topics.interval.seconds': '600',
  'refresh.groups.enabled': 'true',
  'refresh.groups.interval.seconds': '600',
  'emit.checkpoints.enabled': 'true',
  'emit.checkpoints.interval.seconds': '60',
  'sync.group.offsets.enabled': 'false',
  'sync.group.offsets.interval.seconds': '60',
  'emit.heartbeats.enabled': 'true',
  'emit.heartbeats.interval.seconds': '1',
  // Whether heartbeats topics are mirrored when the topic filter leaves them out (Kafka's MirrorSourceConfig).
  'heartbeats.replication.enabled': 'true',
  'heartbeats.topic.replication.factor': '3',
  'checkpoints.topic.replication.factor': '3',
  'offset-syncs.topic.replication.factor': '3',
  'offset-syncs.topic.location': 'source',
  // KIP-1031 (Kafka 3.9): false writes no offset syncs (nor their topic); then no checkpoints can be emitted.
  'emit.offset-syncs.enabled': 'true',
  'offset.lag.max': '100',
  'consumer.poll.timeout.ms': '1000',
  'config.properties.exclude':
    'follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, ' +
    'message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, ' +
    'min\\.insync\\.replicas',
};

/** The repeated jobs, each with `<name>.interval.seconds` (see intervalMs). */
const INTERVAL_NAMES = [
  'sync.topic.configs',
  'sync.topic.acls',
  'refresh.topics',
  'refresh.groups',
  'emit.checkpoints',
  'sync.group.offsets',
  'emit.heartbeats',
];

export class MirrorConfig {
  readonly sourceAlias: string;
  readonly targetAlias: string;
  readonly policy: ReplicationPolicy;

  constructor(readonly props: Readonly<Record<string, string>>) {
    this.sourceAlias = this.required('source.cluster.alias');
    this.targetAlias = this.required('target.cluster.alias');
    this.policy = replicationPolicyFrom({ ...MIRROR_DEFAULTS, ...props });
    const location = this.string('offset-syncs.topic.location');
    if (location !== 'source' && location !== 'target')
      throw ConfigException.invalid(
        'offset-syncs.topic.location',
        location,
        'String must be one of (case insensitive): SOURCE, TARGET',
      );
    for (const k of ['offset.lag.max', 'replication.factor']) this.int(k);
    for (const k of INTERVAL_NAMES) this.intervalMs(k);
  }

  private required(key: string): string {
    const v = this.props[key]?.trim();
    if (v === undefined || v === '')
      throw new ConfigException(`Missing required configuration "${key}" which has no default value.`);
    return v;
  }

  string(key: string): string {
    return (this.props[key] ?? MIRROR_DEFAULTS[key] ?? '').trim();
  }

  bool(key: string): boolean {
    const v = this.string(key).toLowerCase();
    if (v !== 'true' && v !== 'false')
      throw ConfigException.invalid(key, v, 'Expected value to be either true or false');
    return v === 'true';
  }

  int(key: string): number {
    const text = this.string(key);
    const v = Number(text);
    if (text === '' || !Number.isSafeInteger(v))
      throw ConfigException.invalid(key, text, 'Not a number of type LONG');
    return v;
  }

  /**
   * The period of a repeated job in ms, from Kafka's `<name>.interval.seconds`; `<name>.interval.ms`, when set,
   * wins (a Brook addition for sub-second periods). Negative disables the job, as in Kafka's Scheduler.
   */
  intervalMs(name: string): number {
    const ms = this.props[`${name}.interval.ms`];
    if (ms !== undefined && ms.trim() !== '') return this.int(`${name}.interval.ms`);
    return this.int(`${name}.interval.seconds`) * 1000;
  }

  /** A comma-separated list of regexes, each matched against the whole name (Kafka's Pattern.matches). */
  patterns(key: string): RegExp[] {
    return this.string(key)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((s) => {
        try {
          return new RegExp(`^(?:${s})$`);
        } catch (err) {
          throw ConfigException.invalid(key, s, (err as Error).message);
        }
      });
  }

  /**
   * Client options for one side: its `<side>.cluster.` keys (bootstrap.servers, security keys), then for a role
   * the overrides Kafka's MirrorConnectorConfig layers on them: `<side>.cluster.<role>.` (from `A.consumer.*` in
   * mm2.properties), `<role>.` and `<side>.<role>.` (`source.consumer.*`, `target.producer.*`, `target.admin.*`).
   */
  clientOptions(
    side: 'source' | 'target',
    clientId: string,
    role?: 'consumer' | 'producer' | 'admin',
  ): ClientOptions {
    const props: Record<string, string> = {};
    const take = (prefix: string) => {
      for (const [k, v] of Object.entries(this.props))
        if (k.startsWith(prefix)) props[k.slice(prefix.length)] = v;
    };
    take(`${side}.cluster.`);
    if (role !== undefined) {
      take(`${side}.cluster.${role}.`);
      take(`${role}.`);
      take(`${side}.${role}.`);
    }
    const bootstrap = props['bootstrap.servers'] ?? '';
    if (bootstrap.trim() === '')
      throw new ConfigException(
        `Missing required configuration "${side}.cluster.bootstrap.servers" which has no default value.`,
      );
    return { bootstrapServers: bootstrap, clientId, ...clientSecurity(props) };
  }

  /**
   * One client key of a role as Kafka layers them (see clientOptions), e.g. the source consumer's
   * `isolation.level` from `source.consumer.isolation.level`, `consumer.isolation.level` or `A.consumer.*`.
   */
  clientProp(side: 'source' | 'target', role: 'consumer' | 'producer' | 'admin', key: string): string | null {
    let v: string | null = null;
    for (const prefix of [`${side}.cluster.`, `${side}.cluster.${role}.`, `${role}.`, `${side}.${role}.`]) {
      const x = this.props[`${prefix}${key}`];
      if (x !== undefined) v = x.trim();
    }
    return v;
  }

  /** The source consumer reads only committed records (isolation.level=read_committed). */
  get sourceReadCommitted(): boolean {
    return (
      (this.clientProp('source', 'consumer', 'isolation.level') ?? '').toLowerCase() === 'read_committed'
    );
  }

  /** The cluster that holds the offset-syncs topic. */
  get offsetSyncsSide(): 'source' | 'target' {
    return this.string('offset-syncs.topic.location') === 'target' ? 'target' : 'source';
  }

  get offsetSyncsTopic(): string {
    return this.policy.offsetSyncsTopic(this.targetAlias);
  }

  get checkpointsTopic(): string {
    return this.policy.checkpointsTopic(this.sourceAlias);
  }
}

function clientSecurity(props: Record<string, string>): Pick<ClientOptions, 'tls' | 'sasl'> {
  const protocol = (props['security.protocol'] ?? 'PLAINTEXT').trim().toUpperCase();
  if (securityResolver !== null) return securityResolver(props);
  if (protocol !== 'PLAINTEXT')
    throw ConfigException.invalid(
      'security.protocol',
      protocol,
      'this worker reads only PLAINTEXT cluster settings (run the connectors with `brook mirror-maker` for security)',
    );
  return {};
}

/** Which topics and groups a flow mirrors: Kafka's DefaultTopicFilter, DefaultGroupFilter and cycle check. */
export class MirrorFilters {
  private readonly topics: RegExp[];
  private readonly topicsExclude: RegExp[];
  private readonly groups: RegExp[];
  private readonly groupsExclude: RegExp[];
  private readonly configsExclude: RegExp[];
  private readonly heartbeatsReplication: boolean;

  constructor(private readonly c: MirrorConfig) {
    this.topics = c.patterns('topics');
    this.topicsExclude = c.patterns('topics.exclude');
    this.groups = c.patterns('groups');
    this.groupsExclude = c.patterns('groups.exclude');
    this.configsExclude = c.patterns('config.properties.exclude');
    this.heartbeatsReplication = c.bool('heartbeats.replication.enabled');
  }

  /**
   * Whether MirrorSourceConnector mirrors the topic: the topic filter's answer, or a heartbeats topic while
   * heartbeats.replication.enabled (true by default) says they go whatever the filter says; never an internal
   * topic nor one that came from the target.
   */
  shouldReplicateTopic(topic: string): boolean {
    const p = this.c.policy;
    const heartbeats = this.heartbeatsReplication && p.isHeartbeatsTopic(topic);
    return (this.byTopicFilter(topic) || heartbeats) && !p.isInternalTopic(topic) && !this.isCycle(topic);
  }

  /** Kafka's DefaultTopicFilter alone: `topics` and not `topics.exclude`. */
  byTopicFilter(topic: string): boolean {
    return this.topics.some((r) => r.test(topic)) && !this.topicsExclude.some((r) => r.test(topic));
  }

  /** A topic that came from the target cluster (directly or through others) must not go back there. */
  private isCycle(topic: string): boolean {
    const p = this.c.policy;
    let t: string | null = topic;
    for (let hops = 0; t !== null && hops < 100; hops++) {
      const source = p.topicSource(t);
      if (source === null) return false;
      if (source === this.c.targetAlias) return true;
      const up = p.upstreamTopic(t);
      if (up === t) return false;
      t = up;
    }
    return false;
  }

  shouldReplicateGroup(group: string): boolean {
    return this.groups.some((r) => r.test(group)) && !this.groupsExclude.some((r) => r.test(group));
  }

  shouldReplicateConfig(name: string): boolean {
    return !this.configsExclude.some((r) => r.test(name));
  }
}
