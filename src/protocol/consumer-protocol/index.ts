// The embedded consumer protocol: the subscription a consumer puts in JoinGroup's protocol metadata and the
// assignment the leader hands out through SyncGroup. Both are opaque bytes to the group coordinator and are
// written as an int16 version followed by the versioned body (layouts generated in subscription.ts and
// assignment.ts). A version newer than Brook knows is read by its known fields, as Kafka's clients do, so a
// newer client's metadata still parses.

import { decodeVersioned, encodeVersioned, type Versioned } from '../messages/codec-support.js';
import { type ConsumerProtocolAssignment, consumerProtocolAssignmentSchema } from './assignment.js';
import { type ConsumerProtocolSubscription, consumerProtocolSubscriptionSchema } from './subscription.js';

export * from './assignment.js';
export * from './subscription.js';

export function encodeSubscription(version: number, value: ConsumerProtocolSubscription): Buffer {
  return encodeVersioned(consumerProtocolSubscriptionSchema, version, value);
}

export function decodeSubscription(bytes: Buffer): Versioned<ConsumerProtocolSubscription> {
  return decodeVersioned(consumerProtocolSubscriptionSchema, bytes, 'read-known-fields');
}

export function encodeAssignment(version: number, value: ConsumerProtocolAssignment): Buffer {
  return encodeVersioned(consumerProtocolAssignmentSchema, version, value);
}

export function decodeAssignment(bytes: Buffer): Versioned<ConsumerProtocolAssignment> {
  return decodeVersioned(consumerProtocolAssignmentSchema, bytes, 'read-known-fields');
}
