// Authorized operations (KIP-430): Metadata, DescribeCluster, DescribeGroups and ConsumerGroupDescribe answer,
// when the request asks, the ACL operations the caller may perform on a resource as a bit set (bit n set for
// the operation with code n, Kafka's Utils.to32BitField). Brook has no authorizer, and Kafka without one answers
// every operation the resource type supports (AclEntry.supportedOperations); when not asked, the field keeps
// its schema default, INT32_MIN.

/** Kafka's AclOperation codes. */
export const AclOperation = {
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
} as const;

/** The field's value when the request did not ask for authorized operations. */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

function bitSet(operations: readonly number[]): number {
  let bits = 0;
  for (const op of operations) bits |= 1 << op;
  return bits;
}

const A = AclOperation;

/** Every operation each resource type supports: what Kafka answers when no authorizer is configured. */
export const ALL_AUTHORIZED_OPERATIONS = {
  topic: bitSet([
    A.READ,
    A.WRITE,
    A.CREATE,
    A.DESCRIBE,
    A.DELETE,
    A.ALTER,
    A.DESCRIBE_CONFIGS,
    A.ALTER_CONFIGS,
  ]),
  group: bitSet([A.READ, A.DESCRIBE, A.DELETE, A.DESCRIBE_CONFIGS, A.ALTER_CONFIGS]),
  cluster: bitSet([
    A.CREATE,
    A.CLUSTER_ACTION,
    A.DESCRIBE_CONFIGS,
    A.ALTER_CONFIGS,
    A.IDEMPOTENT_WRITE,
    A.ALTER,
    A.DESCRIBE,
  ]),
} as const;

/** The authorized-operations field for a resource of `type`: all supported operations if asked, else omitted. */
export function authorizedOperations(type: keyof typeof ALL_AUTHORIZED_OPERATIONS, asked: boolean): number {
  return asked ? ALL_AUTHORIZED_OPERATIONS[type] : AUTHORIZED_OPERATIONS_OMITTED;
}
