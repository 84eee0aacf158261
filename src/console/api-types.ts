// The JSON shapes of the console's HTTP API (`/api/...`), shared by the server (console-api.ts) and the page
// (web/). Types only: the page's bundle imports nothing at run time from here. Offsets and timestamps are
// numbers (safe integers, as the client holds them); record bytes travel as base64 so that any key, value or
// header survives JSON, and the page decides how to show them (text, JSON or hex: format.ts).

/** Every error answer: a 4xx or 5xx status with this body. `code` is Kafka's error name when a broker sent one. */
export interface ApiError {
  error: string;
  code?: string;
}

export interface BrokerView {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
  isController: boolean;
  /** 'online' when it answered DescribeLogDirs just now, else 'unreachable' with the reason. */
  state: 'online' | 'unreachable';
  error: string | null;
  partitions: number;
  leaders: number;
  logDirs: {
    path: string;
    totalBytes: number;
    usableBytes: number;
    sizeBytes: number;
    error: string | null;
  }[];
}

export interface ClusterView {
  clusterId: string | null;
  controllerId: number;
  brokers: BrokerView[];
}

export interface TopicSummary {
  name: string;
  internal: boolean;
  partitions: number;
  replicationFactor: number;
  underReplicated: number;
  offline: number;
  /** Bytes on disk over every replica (DescribeLogDirs); null when no broker answered. */
  sizeBytes: number | null;
}

export interface PartitionView {
  partition: number;
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offline: number[];
  earliestOffset: number | null;
  latestOffset: number | null;
  /** broker id -> bytes of its replica. */
  sizeBytes: Record<string, number>;
}

export interface ConfigView {
  name: string;
  value: string | null;
  source: string;
  isDefault: boolean;
  readOnly: boolean;
  sensitive: boolean;
}

export interface TopicView {
  name: string;
  topicId: string;
  internal: boolean;
  partitions: PartitionView[];
  configs: ConfigView[];
}

export interface CreateTopicRequest {
  name: string;
  partitions?: number;
  replicationFactor?: number;
  configs?: Record<string, string>;
}

/** Sets (a string value) or removes (null: back to the default) topic configs, with IncrementalAlterConfigs. */
export interface AlterConfigsRequest {
  set: Record<string, string | null>;
}

export interface AddPartitionsRequest {
  /** The new total, greater than today's count. */
  count: number;
}

/** Deleting asks the name again, as a confirmation typed by the user. */
export interface DeleteTopicRequest {
  confirm: string;
}

export interface RecordView {
  partition: number;
  offset: number;
  timestamp: number;
  /** base64, null for a null key or value. */
  key: string | null;
  value: string | null;
  headers: { key: string; value: string | null }[];
  /** Bytes of the value before truncation (values above the browse limit are cut). */
  valueBytes: number;
  truncated: boolean;
}

export type BrowseMode = 'newest' | 'offset' | 'timestamp' | 'oldest';

export interface BrowseResult {
  records: RecordView[];
  /** Per partition: where reading started and the end offset seen when it did. */
  partitions: { partition: number; startOffset: number; endOffset: number }[];
}

export interface ProduceRequest {
  partition?: number;
  key?: string | null;
  value: string | null;
  headers?: Record<string, string>;
}

export interface ProduceResult {
  partition: number;
  offset: number;
}

export interface GroupSummary {
  groupId: string;
  state: string;
  protocolType: string;
  coordinator: number;
}

export interface GroupPartitionLag {
  topic: string;
  partition: number;
  committedOffset: number | null;
  endOffset: number | null;
  /** endOffset - committedOffset; null when either is unknown. */
  lag: number | null;
  memberId: string | null;
}

export interface GroupView {
  groupId: string;
  state: string;
  protocolType: string;
  protocol: string;
  coordinator: number;
  members: {
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    assignment: { topic: string; partition: number }[];
  }[];
  offsets: GroupPartitionLag[];
  totalLag: number;
}

export interface ResetOffsetsRequest {
  /** Only this topic's partitions (default: every partition the group has committed). */
  topic?: string;
  to: 'earliest' | 'latest' | 'offset' | 'timestamp';
  /** The offset (to: 'offset') or milliseconds since the epoch (to: 'timestamp'). */
  value?: number;
}

export interface ResetOffsetsResult {
  partitions: { topic: string; partition: number; offset: number; error: string | null }[];
}

export interface AclView {
  resourceType: string;
  resourceName: string;
  patternType: string;
  principal: string;
  host: string;
  operation: string;
  permission: string;
}

export interface AclsResult {
  /** False when the cluster has no authorizer (SECURITY_DISABLED): there are no ACLs to show. */
  enabled: boolean;
  message: string | null;
  acls: AclView[];
}

/**
 * A client quota entity: a user, a client id, both, or an IP. A part that is null is Kafka's default entity (every
 * user, every client id, every IP); a part left out is not part of the entity.
 */
export interface QuotaEntityView {
  user?: string | null;
  clientId?: string | null;
  ip?: string | null;
}

export interface QuotaView extends QuotaEntityView {
  values: Record<string, number>;
}

/** AlterClientQuotas of one entity: a number sets the key, null removes it. */
export interface AlterQuotasRequest {
  entity: QuotaEntityView;
  set: Record<string, number | null>;
}

/** One point of the live charts. Rates are per second over the interval before `timeMs`. */
export interface MetricsPoint {
  timeMs: number;
  messagesInPerSec: number | null;
  bytesInPerSec: number | null;
  bytesOutPerSec: number | null;
  /** Messages per second consumed by groups (committed offsets' growth), when the brokers' metrics are not read. */
  messagesConsumedPerSec: number | null;
  /** Mean total time of Produce and of Fetch requests at the brokers over the interval (metrics only). */
  produceLatencyMs: number | null;
  fetchLatencyMs: number | null;
  /** The console's own ListOffsets round trip to the cluster, measured at each sample (always). */
  probeLatencyMs: number | null;
  /** group id -> total lag (committed offsets against log end offsets, always read from the cluster). */
  lag: Record<string, number>;
}

export interface MetricsSeries {
  /** 'prometheus' when --metrics-url is set and answered, else 'offsets' (log end and committed offsets). */
  source: 'prometheus' | 'offsets';
  intervalMs: number;
  points: MetricsPoint[];
  error: string | null;
}
