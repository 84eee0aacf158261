// What request handlers ask the authorizer, in Kafka's terms (KafkaApis' AuthHelper): may this request's
// principal, from its host, perform an operation on a resource. Without an authorizer (authorizer.class.name
// unset) every answer is yes and nothing else runs. Each check writes the authorization log (audit-log.ts).
//
// Nothing is granted implicitly, not even to the brokers: as in Kafka, their principal on the inter-broker
// listener (User:ANONYMOUS on PLAINTEXT or SSL without client certificates, their SASL user or certificate name
// otherwise) needs super.users or a CLUSTER_ACTION ACL for replication, controller requests and transaction markers.

import type { Connection } from '../network/connection.js';
import { findApi } from '../protocol/registry.js';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/authorizer/acl-types.js';
import type { RequestContext } from './api-handler.js';
import { ALL_AUTHORIZED_OPERATIONS, AUTHORIZED_OPERATIONS_OMITTED } from './authorized-operations.js';

export { AclOperation, ResourceType };

/** The address as Kafka prints an InetAddress: IPv4-mapped IPv6 addresses in their IPv4 form. */
export function hostOf(connection: Connection): string {
  const address = connection.remoteAddress;
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/**
 * Whether the request may perform `operation` on the resource. `logIfDenied` false for checks whose denial is
 * not an error the caller sees (Metadata leaving out topics), as Kafka does.
 */
export function authorize(
  context: RequestContext,
  operation: number,
  resourceType: number,
  name: string,
  logIfDenied = true,
): boolean {
  const authorizer = context.services.authorizer;
  if (authorizer === null) return true;
  const principal = context.connection.security.principal;
  const host = hostOf(context.connection);
  const allowed = authorizer.authorize(principal, host, operation, resourceType, name);
  // Tested here, before anything is allocated for the line: with the log at INFO an allowed check (the common
  // case) costs two boolean reads.
  const audit = authorizer.audit;
  if (allowed ? audit.allowedEnabled : logIfDenied && audit.deniedEnabled) {
    audit.record(allowed, principal, host, operation, resourceType, name, () => requestName(context));
  }
  return allowed;
}

export function authorizeTopic(context: RequestContext, operation: number, topic: string): boolean {
  return authorize(context, operation, ResourceType.TOPIC, topic);
}

export function authorizeGroup(context: RequestContext, operation: number, group: string): boolean {
  return authorize(context, operation, ResourceType.GROUP, group);
}

export function authorizeTransactionalId(context: RequestContext, operation: number, id: string): boolean {
  return authorize(context, operation, ResourceType.TRANSACTIONAL_ID, id);
}

export function authorizeCluster(context: RequestContext, operation: number): boolean {
  return authorize(context, operation, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME);
}

/** Kafka's authorizeByResourceType: whether the principal may perform `operation` on some resource of the type. */
export function authorizeAnyOfType(
  context: RequestContext,
  operation: number,
  resourceType: number,
): boolean {
  const authorizer = context.services.authorizer;
  if (authorizer === null) return true;
  const principal = context.connection.security.principal;
  return authorizer.authorizeAny(principal, hostOf(context.connection), operation, resourceType);
}

function requestName(context: RequestContext): string {
  return findApi(context.header.requestApiKey)?.name ?? String(context.header.requestApiKey);
}

const OPERATIONS_BY_TYPE = {
  topic: ALL_AUTHORIZED_OPERATIONS.topic,
  group: ALL_AUTHORIZED_OPERATIONS.group,
  cluster: ALL_AUTHORIZED_OPERATIONS.cluster,
} as const;

const RESOURCE_TYPE_OF = {
  topic: ResourceType.TOPIC,
  group: ResourceType.GROUP,
  cluster: ResourceType.CLUSTER,
} as const;

/**
 * KIP-430's cluster operations (Metadata v8-v10, DescribeCluster): as Kafka, computed only for a principal that may
 * DESCRIBE the cluster (a check logged as any other), 0 for the others; INT32_MIN when the request did not ask.
 */
export function clusterAuthorizedOperations(context: RequestContext, asked: boolean): number {
  if (!asked) return AUTHORIZED_OPERATIONS_OMITTED;
  if (!authorizeCluster(context, AclOperation.DESCRIBE)) return 0;
  return authorizedOperations(context, 'cluster', CLUSTER_RESOURCE_NAME, true);
}

/**
 * KIP-430: the operations the caller may perform on the resource, as Kafka's bit set, among those its type
 * supports; INT32_MIN when the request did not ask. Checked without writing the authorization log, as Kafka.
 */
export function authorizedOperations(
  context: RequestContext,
  type: keyof typeof OPERATIONS_BY_TYPE,
  name: string,
  asked: boolean,
): number {
  if (!asked) return AUTHORIZED_OPERATIONS_OMITTED;
  const supported = OPERATIONS_BY_TYPE[type];
  const authorizer = context.services.authorizer;
  if (authorizer === null) return supported;
  const principal = context.connection.security.principal;
  const host = hostOf(context.connection);
  let bits = 0;
  for (let op: number = AclOperation.READ; op <= AclOperation.IDEMPOTENT_WRITE; op++) {
    if ((supported & (1 << op)) === 0) continue;
    if (authorizer.authorize(principal, host, op, RESOURCE_TYPE_OF[type], name)) bits |= 1 << op;
  }
  return bits;
}
