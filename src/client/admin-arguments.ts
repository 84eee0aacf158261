// Argument checks of the admin client's calls, as Kafka's KafkaAdminClient makes them: an entity that cannot be
// represented in a request (a topic that is missing or empty, a group id that is missing) fails alone without being sent, and a
// broker config resource whose name is not a broker id is refused before anything is sent. Java's types rule out
// the rest, which a JavaScript caller can pass: a count, offset or id that is not an integer of its field's width
// fails its entity with the Kafka error the broker gives that field, instead of being truncated on the wire (a
// count of 4.5 became 4) or throwing a raw TypeError or RangeError from deep in the request encoding.

import { ErrorCode } from '../protocol/errors.js';
import { KafkaProtocolError } from './errors.js';

/** A value named in an argument error: its type, and the value itself when it is short. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return typeof value;
}

/** Whether `n` is an integer a signed field of `bits` bits holds. */
export function isInt(n: unknown, bits: 16 | 32 | 64): boolean {
  return typeof n === 'number' && Number.isInteger(n) && n >= -(2 ** (bits - 1)) && n < 2 ** (bits - 1);
}

/** Kafka's admin error for a topic name that is no string or empty: it is not sent. */
export function unrepresentableTopic(name: unknown): KafkaProtocolError {
  return new KafkaProtocolError(
    ErrorCode.INVALID_TOPIC_EXCEPTION,
    `The given topic name '${String(name)}' cannot be represented in a request.`,
  );
}

/**
 * Kafka's error for a group id that is no string (CoordinatorStrategy's unrepresentable keys, InvalidGroupIdException):
 * the group is not looked up nor sent. The empty group id is representable (Kafka 3.9's isRepresentableKey is
 * `groupId != null`) and goes to the broker, whose coordinator takes it for DescribeGroups, DeleteGroups, OffsetCommit
 * and OffsetFetch and answers INVALID_GROUP_ID itself where it does not.
 */
export function unrepresentableGroup(groupId: unknown): KafkaProtocolError | null {
  if (typeof groupId === 'string') return null;
  return new KafkaProtocolError(
    ErrorCode.INVALID_GROUP_ID,
    `The given group id '${String(groupId ?? '')}' cannot be represented in a request.`,
  );
}

/**
 * The broker a config resource must go to, null for any broker, as Kafka's KafkaAdminClient.nodeFor: a broker
 * resource other than the cluster default (empty name) and every broker-logger resource name a broker id. A name
 * that is not one is refused with a RangeError (Kafka: NumberFormatException, an IllegalArgumentException, thrown
 * by the call) instead of a call that looks for broker NaN until its timeout.
 */
export function brokerOfConfigResource(type: string, name: unknown): number | null {
  if (!(type === 'broker' && name !== '') && type !== 'broker-logger') return null;
  const id = typeof name === 'string' && /^[+-]?\d{1,10}$/.test(name) ? Number(name) : Number.NaN;
  if (!isInt(id, 32)) {
    throw new RangeError(`the ${type} config resource '${String(name)}' does not name a broker id`);
  }
  return id;
}

/**
 * Why an entry of createPartitions cannot be sent, as the Kafka error its topic fails with; null when it can. The
 * topic must be a string (an empty one is sent: the broker answers it as unknown, as for Kafka's admin); the total
 * count a 32-bit integer (INVALID_PARTITIONS) and the assignments arrays of broker ids (INVALID_REPLICA_ASSIGNMENT).
 */
export function newPartitionsError(entry: unknown): KafkaProtocolError | null {
  if (typeof entry !== 'object' || entry === null) return unrepresentableTopic(undefined);
  const { topic, count, assignments } = entry as { topic?: unknown; count?: unknown; assignments?: unknown };
  if (typeof topic !== 'string') return unrepresentableTopic(topic);
  if (!isInt(count, 32))
    return new KafkaProtocolError(
      ErrorCode.INVALID_PARTITIONS,
      `count of topic ${topic} is not a 32-bit integer: ${describeValue(count)}`,
    );
  if (
    assignments !== undefined &&
    assignments !== null &&
    (!Array.isArray(assignments) ||
      !assignments.every((ids) => Array.isArray(ids) && ids.every((id) => isInt(id, 32))))
  )
    return new KafkaProtocolError(
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      `assignments of topic ${topic} is not an array of arrays of broker ids`,
    );
  return null;
}

/**
 * Why an entry of deleteRecords cannot be sent, as the Kafka error its partition fails with; null when it can: a
 * topic that is no string or empty (InvalidTopicException, as Kafka's metadata lookup answers it), an offset that
 * is not an integer (OFFSET_OUT_OF_RANGE, the broker's answer to an offset outside the log).
 */
export function deleteRecordsError(entry: unknown): KafkaProtocolError | null {
  if (typeof entry !== 'object' || entry === null) return unrepresentableTopic(undefined);
  const { topic, partition, offset } = entry as { topic?: unknown; partition?: unknown; offset?: unknown };
  if (typeof topic !== 'string' || topic === '') return unrepresentableTopic(topic);
  if (!isInt(partition, 32))
    return new KafkaProtocolError(
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      `partition of topic ${topic} is not a 32-bit integer: ${describeValue(partition)}`,
    );
  if (!isInt(offset, 64))
    return new KafkaProtocolError(
      ErrorCode.OFFSET_OUT_OF_RANGE,
      `offset for ${topic}-${String(partition)} is not an integer: ${describeValue(offset)}`,
    );
  return null;
}
