// Authorized operations (KIP-430): Metadata, DescribeCluster, DescribeGroups and ConsumerGroupDescribe answer,
// when the request asks, the ACL operations the caller may perform on a resource as a bit set (bit n set for
// the operation with code n, Kafka's Utils.to32BitField). Without an authorizer Kafka answers every operation the
// resource type supports (AclEntry.supportedOperations); with one, src/broker/authorization.ts asks it per
// operation. When not asked, the field keeps its schema default, INT32_MIN.

import { AclOperation } from '../security/authorizer/acl-types.js';

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
