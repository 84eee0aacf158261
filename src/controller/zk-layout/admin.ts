// Requests and notifications that tools and brokers leave for the controller, in Kafka's formats.
//
// /admin/delete_topics/<t>              no data: the node's existence asks the controller to delete <t>
// /admin/reassign_partitions            {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}
// /admin/preferred_replica_election     {"version":1,"partitions":[{"topic":"t","partition":0}]}
// /isr_change_notification/isr_change_<10 digits>
//                                       {"version":1,"partitions":[{"topic":"t","partition":0}]}
// /log_dir_event_notification/log_dir_event_<10 digits>
//                                       {"version":1,"broker":1,"event":1}   (1: a log dir failed)

import type { BrokerId, PartitionId } from '../../common/ids.js';
import { type Decoded, decodeJson, encodeJson, type JsonObject } from './json.js';

export interface TopicPartitionRef {
  readonly topic: string;
  readonly partition: PartitionId;
}

export interface PartitionReassignment extends TopicPartitionRef {
  readonly replicas: readonly BrokerId[];
}

export function encodeReassignPartitions(reassignments: readonly PartitionReassignment[]): Uint8Array {
  return encodeJson({
    version: 1,
    partitions: reassignments.map((r) => ({ topic: r.topic, partition: r.partition, replicas: r.replicas })),
  });
}

export function decodeReassignPartitions(bytes: Uint8Array): Decoded<PartitionReassignment[]> {
  return decodeJson('partition reassignment', bytes, (json) => {
    json.version([1]);
    return json.objectArray('partitions').map((p) => ({
      ...readRef(p),
      replicas: p.intArray('replicas', { min: 0 }) as BrokerId[],
    }));
  });
}

export function encodePreferredReplicaElection(partitions: readonly TopicPartitionRef[]): Uint8Array {
  return encodePartitionList(partitions);
}

export function decodePreferredReplicaElection(bytes: Uint8Array): Decoded<TopicPartitionRef[]> {
  return decodePartitionList('preferred replica election', bytes);
}

export function encodeIsrChangeNotification(partitions: readonly TopicPartitionRef[]): Uint8Array {
  return encodePartitionList(partitions);
}

export function decodeIsrChangeNotification(bytes: Uint8Array): Decoded<TopicPartitionRef[]> {
  return decodePartitionList('ISR change notification', bytes);
}

/** The only log dir event Kafka defines. */
export const LOG_DIR_FAILURE_EVENT = 1;

export interface LogDirEvent {
  readonly brokerId: BrokerId;
  readonly event: number;
}

export function encodeLogDirEvent(event: LogDirEvent): Uint8Array {
  return encodeJson({ version: 1, broker: event.brokerId, event: event.event });
}

export function decodeLogDirEvent(bytes: Uint8Array): Decoded<LogDirEvent> {
  return decodeJson('log dir event notification', bytes, (json) => {
    json.version([1]);
    return { brokerId: json.int('broker', { min: 0 }) as BrokerId, event: json.int('event') };
  });
}

function encodePartitionList(partitions: readonly TopicPartitionRef[]): Uint8Array {
  return encodeJson({
    version: 1,
    partitions: partitions.map((p) => ({ topic: p.topic, partition: p.partition })),
  });
}

function decodePartitionList(znode: string, bytes: Uint8Array): Decoded<TopicPartitionRef[]> {
  return decodeJson(znode, bytes, (json) => {
    json.version([1]);
    return json.objectArray('partitions').map(readRef);
  });
}

function readRef(json: JsonObject): TopicPartitionRef {
  const topic = json.string('topic');
  if (topic.length === 0) json.fail('topic', 'is empty');
  return { topic, partition: json.int('partition', { min: 0 }) as PartitionId };
}
