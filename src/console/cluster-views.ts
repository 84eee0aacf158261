// What the console's pages show of the cluster, read and changed through Brook's admin client only (so the console
// works against any Kafka-compatible cluster): brokers, topics with partitions, sizes and configs, consumer groups
// with lag, ACLs and quotas. Each function makes the calls one view needs and shapes the answer (api-types.ts);
// per-item Kafka errors become HttpErrors. Deadlines are the caller's (console-api.ts wraps every call).

import type { Admin, ClientQuotaEntity } from '../client/admin.js';
import { KafkaProtocolError } from '../client/errors.js';
import type { TopicPartition } from '../client/requests.js';
import { ErrorCode } from '../protocol/errors.js';
import {
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  operationName,
  PatternType,
  PermissionType,
  patternTypeEnumName,
  permissionName,
  ResourceType,
  resourceTypeName,
} from '../security/authorizer/acl-types.js';
import { HttpError, kafkaError } from './api-error.js';
import type {
  AclsResult,
  AclView,
  BrokerView,
  ClusterView,
  ConfigView,
  GroupPartitionLag,
  GroupSummary,
  GroupView,
  PartitionView,
  QuotaView,
  ResetOffsetsRequest,
  ResetOffsetsResult,
  TopicSummary,
  TopicView,
} from './api-types.js';

type LogDirs = Awaited<ReturnType<Admin['describeLogDirs']>>;

/** Each broker's log dirs, asked one broker at a time so that one unreachable broker spoils only its own row. */
async function logDirsByBroker(admin: Admin, brokerIds: number[]): Promise<Map<number, LogDirs | Error>> {
  const answers = await Promise.all(
    brokerIds.map((id) =>
      admin.describeLogDirs([id]).then(
        (dirs) => dirs,
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      ),
    ),
  );
  return new Map(brokerIds.map((id, i) => [id, answers[i]!]));
}

export async function clusterView(admin: Admin): Promise<ClusterView> {
  const cluster = await admin.describeCluster();
  const topics = await admin.describeTopics();
  const ids = cluster.brokers.map((b) => b.nodeId).sort((a, b) => a - b);
  const dirs = await logDirsByBroker(admin, ids);
  const brokers: BrokerView[] = ids.map((nodeId) => {
    const b = cluster.brokers.find((x) => x.nodeId === nodeId)!;
    let partitions = 0;
    let leaders = 0;
    for (const t of topics) {
      for (const p of t.partitions) {
        if (p.replicas.includes(nodeId)) partitions++;
        if (p.leader === nodeId) leaders++;
      }
    }
    const answer = dirs.get(nodeId);
    const failed = answer instanceof Error;
    return {
      nodeId,
      host: b.host,
      port: b.port,
      rack: b.rack,
      isController: nodeId === cluster.controllerId,
      state: failed ? 'unreachable' : 'online',
      error: failed ? answer.message : null,
      partitions,
      leaders,
      logDirs: failed
        ? []
        : answer!.map((d) => ({
            path: d.logDir,
            totalBytes: d.totalBytes,
            usableBytes: d.usableBytes,
            sizeBytes: d.partitions.reduce((sum, p) => sum + p.size, 0),
            error: d.error?.message ?? null,
          })),
    };
  });
  return { clusterId: cluster.clusterId, controllerId: cluster.controllerId, brokers };
}

/** topic -> partition -> broker -> bytes, from every broker that answered. */
async function sizes(
  admin: Admin,
  brokerIds: number[],
): Promise<Map<string, Map<number, Map<number, number>>>> {
  const out = new Map<string, Map<number, Map<number, number>>>();
  for (const [broker, answer] of await logDirsByBroker(admin, brokerIds)) {
    if (answer instanceof Error) continue;
    for (const dir of answer) {
      for (const p of dir.partitions) {
        if (p.isFuture) continue;
        let byPartition = out.get(p.topic);
        if (byPartition === undefined) out.set(p.topic, (byPartition = new Map()));
        let byBroker = byPartition.get(p.partition);
        if (byBroker === undefined) byPartition.set(p.partition, (byBroker = new Map()));
        byBroker.set(broker, p.size);
      }
    }
  }
  return out;
}

async function brokerIds(admin: Admin): Promise<number[]> {
  return (await admin.describeCluster()).brokers.map((b) => b.nodeId);
}

export async function topicList(admin: Admin): Promise<TopicSummary[]> {
  const topics = await admin.describeTopics();
  const bytes = await sizes(admin, await brokerIds(admin));
  return topics
    .filter((t) => t.error === null)
    .map((t) => {
      const byPartition = bytes.get(t.topic);
      let sizeBytes: number | null = null;
      if (byPartition !== undefined) {
        sizeBytes = 0;
        for (const byBroker of byPartition.values()) for (const n of byBroker.values()) sizeBytes += n;
      }
      return {
        name: t.topic,
        internal: t.isInternal,
        partitions: t.partitions.length,
        replicationFactor: t.partitions[0]?.replicas.length ?? 0,
        underReplicated: t.partitions.filter((p) => p.isr.length < p.replicas.length).length,
        offline: t.partitions.filter((p) => p.leader < 0).length,
        sizeBytes,
      };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function configViews(
  configs: Awaited<ReturnType<Admin['describeConfigs']>>[number]['configs'],
): ConfigView[] {
  return configs
    .map((c) => ({
      name: c.name,
      value: c.isSensitive ? null : c.value,
      source: c.source,
      isDefault: c.isDefault,
      readOnly: c.readOnly,
      sensitive: c.isSensitive,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The topic's partitions or a 404 (the client reports an unknown topic as a value). */
async function describeOne(admin: Admin, name: string) {
  const [t] = await admin.describeTopics([name]);
  if (t === undefined || t.error?.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
    throw new HttpError(404, `topic '${name}' does not exist`, 'UNKNOWN_TOPIC_OR_PARTITION');
  }
  if (t.error !== null) throw kafkaError(t.error.code, t.error.message);
  return t;
}

export async function topicView(admin: Admin, name: string): Promise<TopicView> {
  const t = await describeOne(admin, name);
  const tps = t.partitions.map((p) => ({ topic: name, partition: p.partition }));
  const [earliest, latest] = await Promise.all([
    admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'earliest' as const }))).catch(() => null),
    admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const }))).catch(() => null),
  ]);
  const bytes = (await sizes(admin, await brokerIds(admin))).get(name);
  const [configs] = await admin.describeConfigs([{ type: 'topic', name }]);
  if (configs?.error) throw kafkaError(configs.error.code, configs.error.message);
  const partitions: PartitionView[] = t.partitions
    .map((p) => ({
      partition: p.partition,
      leader: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicas: p.replicas,
      isr: p.isr,
      offline: p.offlineReplicas,
      earliestOffset: earliest?.find((o) => o.partition === p.partition)?.offset ?? null,
      latestOffset: latest?.find((o) => o.partition === p.partition)?.offset ?? null,
      sizeBytes: Object.fromEntries(bytes?.get(p.partition) ?? []),
    }))
    .sort((a, b) => a.partition - b.partition);
  return {
    name,
    topicId: t.topicId,
    internal: t.isInternal,
    partitions,
    configs: configViews(configs?.configs ?? []),
  };
}

export async function createTopic(
  admin: Admin,
  request: {
    name: string;
    partitions?: number;
    replicationFactor?: number;
    configs?: Record<string, string>;
  },
): Promise<void> {
  const [result] = await admin.createTopics([
    {
      topic: request.name,
      numPartitions: request.partitions ?? -1,
      replicationFactor: request.replicationFactor ?? -1,
      configs: request.configs ?? {},
    },
  ]);
  if (result?.error) throw kafkaError(result.error.code, result.error.message);
}

export async function alterTopicConfigs(
  admin: Admin,
  name: string,
  set: Record<string, string | null>,
): Promise<void> {
  await describeOne(admin, name);
  const ops = Object.entries(set).map(([key, value]) =>
    value === null ? { name: key, op: 'delete' as const } : { name: key, op: 'set' as const, value },
  );
  const [result] = await admin.incrementalAlterConfigs([{ type: 'topic', name, ops }]);
  if (result?.error) throw kafkaError(result.error.code, result.error.message);
}

export async function addPartitions(admin: Admin, name: string, count: number): Promise<void> {
  const t = await describeOne(admin, name);
  if (count <= t.partitions.length) {
    throw new HttpError(
      400,
      `topic '${name}' has ${t.partitions.length} partitions; the new count must be more`,
    );
  }
  const [result] = await admin.createPartitions([{ topic: name, count }]);
  if (result?.error) throw kafkaError(result.error.code, result.error.message);
}

export async function deleteTopic(admin: Admin, name: string): Promise<void> {
  const [result] = await admin.deleteTopics([name]);
  if (result?.error) throw kafkaError(result.error.code, result.error.message);
}

// ---- groups ---------------------------------------------------------------------------------------------------

export async function groupList(admin: Admin): Promise<GroupSummary[]> {
  return (await admin.listGroups()).map((g) => ({
    groupId: g.groupId,
    state: g.state,
    protocolType: g.protocolType,
    coordinator: g.broker,
  }));
}

/** Committed offsets of a group against the partitions' log end offsets. */
export async function groupLag(admin: Admin, groupId: string): Promise<GroupPartitionLag[]> {
  const committed = await admin.listConsumerGroupOffsets(groupId);
  const known = committed.filter((c) => c.offset >= 0);
  const ends =
    known.length === 0 ? [] : await admin.listOffsets(known.map((c) => ({ ...c, spec: 'latest' as const })));
  return committed.map((c) => {
    const end = c.offset >= 0 ? (ends[known.indexOf(c)]?.offset ?? null) : null;
    const committedOffset = c.offset >= 0 ? c.offset : null;
    return {
      topic: c.topic,
      partition: c.partition,
      committedOffset,
      endOffset: end,
      lag: end === null || committedOffset === null ? null : Math.max(0, end - committedOffset),
      memberId: null,
    };
  });
}

export async function groupView(admin: Admin, groupId: string): Promise<GroupView> {
  const [g] = await admin.describeGroups([groupId]);
  if (g === undefined) throw new HttpError(404, `group '${groupId}' does not exist`);
  if (g.error !== null) throw kafkaError(g.error.code, g.error.message);
  if (g.state === 'Dead') throw new HttpError(404, `group '${groupId}' does not exist`, 'GROUP_ID_NOT_FOUND');
  const offsets = await groupLag(admin, groupId);
  // Partitions assigned but never committed are shown too, with their end offsets and no lag.
  const owner = new Map<string, string>();
  for (const m of g.members)
    for (const tp of m.assignment) owner.set(`${tp.topic}\u0000${tp.partition}`, m.memberId);
  const seen = new Set(offsets.map((o) => `${o.topic}\u0000${o.partition}`));
  for (const key of owner.keys()) {
    if (seen.has(key)) continue;
    const [topic, partition] = key.split('\u0000') as [string, string];
    offsets.push({
      topic,
      partition: Number(partition),
      committedOffset: null,
      endOffset: null,
      lag: null,
      memberId: null,
    });
  }
  for (const o of offsets) o.memberId = owner.get(`${o.topic}\u0000${o.partition}`) ?? null;
  offsets.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  return {
    groupId: g.groupId,
    state: g.state,
    protocolType: g.protocolType,
    protocol: g.protocol,
    coordinator: g.coordinator,
    members: g.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      assignment: m.assignment,
    })),
    offsets,
    totalLag: offsets.reduce((sum, o) => sum + (o.lag ?? 0), 0),
  };
}

/**
 * Moves a group's committed offsets, as `kafka-consumer-groups --reset-offsets --execute` does. Kafka's
 * coordinator refuses it while the group has members (the page says so); offsets past the log are clamped to it.
 */
export async function resetOffsets(
  admin: Admin,
  groupId: string,
  request: ResetOffsetsRequest,
): Promise<ResetOffsetsResult> {
  const [g] = await admin.describeGroups([groupId]);
  if (g !== undefined && g.members.length > 0) {
    throw new HttpError(
      409,
      `group '${groupId}' has ${g.members.length} active member(s); stop its consumers before resetting offsets`,
      'NON_EMPTY_GROUP',
    );
  }
  let tps: TopicPartition[];
  if (request.topic !== undefined) {
    const t = await describeOne(admin, request.topic);
    tps = t.partitions.map((p) => ({ topic: request.topic!, partition: p.partition }));
  } else {
    tps = (await admin.listConsumerGroupOffsets(groupId)).map((c) => ({
      topic: c.topic,
      partition: c.partition,
    }));
  }
  if (tps.length === 0) throw new HttpError(400, `group '${groupId}' has no committed offsets; name a topic`);
  const [earliest, latest] = await Promise.all([
    admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'earliest' as const }))),
    admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const }))),
  ]);
  let targets: number[];
  if (request.to === 'earliest') targets = earliest.map((o) => o.offset);
  else if (request.to === 'latest') targets = latest.map((o) => o.offset);
  else if (request.to === 'offset') targets = tps.map(() => request.value!);
  else {
    const byTime = await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: request.value! })));
    // No record at or after the time: the end, as kafka-consumer-groups --to-datetime does.
    targets = byTime.map((o, i) => (o.offset < 0 ? latest[i]!.offset : o.offset));
  }
  const offsets = tps.map((tp, i) => ({
    ...tp,
    offset: Math.min(Math.max(targets[i]!, earliest[i]!.offset), latest[i]!.offset),
  }));
  const results = await admin.alterConsumerGroupOffsets(groupId, offsets);
  return {
    partitions: offsets.map((o) => {
      const r = results.find((x) => x.topic === o.topic && x.partition === o.partition);
      return { ...o, error: r?.error?.message ?? null };
    }),
  };
}

// ---- security -------------------------------------------------------------------------------------------------

function aclView(b: AclBinding): AclView {
  return {
    resourceType: resourceTypeName(b.pattern.resourceType),
    resourceName: b.pattern.name,
    patternType: patternTypeEnumName(b.pattern.patternType),
    principal: b.entry.principal,
    host: b.entry.host,
    operation: operationName(b.entry.operation),
    permission: permissionName(b.entry.permissionType),
  };
}

/** The binding exactly, as a DeleteAcls filter: it matches that one binding and no other. */
export function exactFilter(b: AclBinding): AclBindingFilter {
  return {
    resourceType: b.pattern.resourceType,
    name: b.pattern.name,
    patternType: b.pattern.patternType,
    principal: b.entry.principal,
    host: b.entry.host,
    operation: b.entry.operation,
    permissionType: b.entry.permissionType,
  };
}

const SECURITY_DISABLED_MESSAGE = 'no authorizer is configured on the cluster';

/** The bindings a DescribeAcls filter matches (every binding by default); "no authorizer" is an answer, not an error. */
export async function aclList(admin: Admin, filter: Partial<AclBindingFilter> = {}): Promise<AclsResult> {
  try {
    const bindings = await admin.describeAcls({
      resourceType: ResourceType.ANY,
      name: null,
      patternType: PatternType.ANY,
      principal: null,
      host: null,
      operation: AclOperation.ANY,
      permissionType: PermissionType.ANY,
      ...filter,
    });
    return { enabled: true, message: null, acls: bindings.map(aclView) };
  } catch (error) {
    if (error instanceof KafkaProtocolError && error.code === ErrorCode.SECURITY_DISABLED) {
      return { enabled: false, message: SECURITY_DISABLED_MESSAGE, acls: [] };
    }
    throw error;
  }
}

/** CreateAcls of one binding; the broker's refusal (not authorized, no authorizer, invalid) is the HTTP error. */
export async function createAcl(admin: Admin, binding: AclBinding): Promise<AclView> {
  const [error] = await admin.createAcls([binding]);
  if (error !== null && error !== undefined) throw kafkaError(error.code, error.message);
  return aclView(binding);
}

/** DeleteAcls of exactly one binding; 404 when the cluster has no such binding (deleted meanwhile). */
export async function deleteAcl(admin: Admin, binding: AclBinding): Promise<AclView> {
  const [result] = await admin.deleteAcls([exactFilter(binding)]);
  if (result === undefined) throw new HttpError(502, 'DeleteAcls answered no filter result');
  if (result.error !== null) throw kafkaError(result.error.code, result.error.message);
  if (result.deleted.length === 0)
    throw new HttpError(404, `no such ACL: ${JSON.stringify(aclView(binding))}`);
  return aclView(binding);
}

function quotaView(e: { entity: ClientQuotaEntity; values: Record<string, number> }): QuotaView {
  return { ...e.entity, values: e.values };
}

function quotaKey(entity: ClientQuotaEntity): string {
  return JSON.stringify([entity.user, entity.clientId, entity.ip]);
}

/**
 * Every entity with quotas: users, client ids, users with client ids, IPs, and their defaults. The empty filter
 * lists them all; the ip one as well for a broker whose empty filter leaves IP entities out (Brook did), merged so
 * that each is listed once.
 */
export async function quotaList(admin: Admin): Promise<QuotaView[]> {
  const [clients, ips] = await Promise.all([
    admin.describeClientQuotas([]),
    admin.describeClientQuotas([{ entityType: 'ip', match: 'any' }]),
  ]);
  const byEntity = new Map<string, QuotaView>();
  for (const e of [...clients, ...ips]) byEntity.set(quotaKey(e.entity), quotaView(e));
  return [...byEntity.values()];
}

/** AlterClientQuotas of one entity: a number sets the key, null removes it. */
export async function alterQuotas(
  admin: Admin,
  entity: ClientQuotaEntity,
  set: Record<string, number | null>,
): Promise<void> {
  const ops = Object.entries(set).map(([key, value]) => ({ key, value }));
  const [result] = await admin.alterClientQuotas([{ entity, ops }]);
  if (result === undefined) throw new HttpError(502, 'AlterClientQuotas answered no entry');
  if (result.error !== null) throw kafkaError(result.error.code, result.error.message);
}
