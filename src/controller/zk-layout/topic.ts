// A topic's replica assignment and its partitions' leader and ISR state, in Kafka's formats.
//
// /brokers/topics/<t>  version 3:
//   {"version":3,"topic_id":"<22-character base64url id>","partitions":{"0":[1,2,3],"1":[2,3,1]},
//    "adding_replicas":{"0":[3]},"removing_replicas":{"0":[4]}}
//   Versions 1 and 2 lack topic_id and the adding/removing maps; a partition missing from those maps has none.
//
// /brokers/topics/<t>/partitions/<p>/state  version 1:
//   {"controller_epoch":7,"leader":1,"version":1,"leader_epoch":4,"isr":[1,2]}
//   plus "leader_recovery_state":1 only while a leader elected uncleanly is recovering (Kafka leaves the field
//   out for the normal state, 0). The znode's data version is the partition epoch the controller and
//   AlterPartition compare; it is in the Stat, not in the JSON.

import type { BrokerId, LeaderEpoch, PartitionId } from '../../common/ids.js';
import { type Decoded, decodeJson, encodeJson, type JsonObject } from './json.js';

export interface ReplicaAssignment {
  readonly replicas: readonly BrokerId[];
  readonly addingReplicas: readonly BrokerId[];
  readonly removingReplicas: readonly BrokerId[];
}

export interface TopicAssignment {
  /** Kafka's Uuid in its string form; null for a topic written by a Kafka older than 2.8. */
  readonly topicId: string | null;
  readonly partitions: ReadonlyMap<PartitionId, ReplicaAssignment>;
}

const BROKER_ID = { min: 0 };

export function encodeTopicAssignment(topic: TopicAssignment): Uint8Array {
  const partitions: Record<string, readonly number[]> = {};
  const adding: Record<string, readonly number[]> = {};
  const removing: Record<string, readonly number[]> = {};
  const sorted = [...topic.partitions.entries()].sort(([a], [b]) => a - b);
  for (const [partition, assignment] of sorted) {
    partitions[partition] = assignment.replicas;
    if (assignment.addingReplicas.length > 0) adding[partition] = assignment.addingReplicas;
    if (assignment.removingReplicas.length > 0) removing[partition] = assignment.removingReplicas;
  }
  return encodeJson({
    version: 3,
    ...(topic.topicId === null ? {} : { topic_id: topic.topicId }),
    partitions,
    adding_replicas: adding,
    removing_replicas: removing,
  });
}

export function decodeTopicAssignment(bytes: Uint8Array): Decoded<TopicAssignment> {
  return decodeJson('topic assignment', bytes, (json) => {
    json.version([1, 2, 3]);
    const topicId = json.nullableString('topic_id');
    if (topicId !== null && !isUuidString(topicId)) json.fail('topic_id', `is not a Kafka Uuid: ${topicId}`);
    const replicas = readReplicaMap(json.object('partitions'));
    const adding = readReplicaMap(json.objectOrEmpty('adding_replicas'));
    const removing = readReplicaMap(json.objectOrEmpty('removing_replicas'));
    const partitions = new Map<PartitionId, ReplicaAssignment>();
    for (const [partition, list] of [...replicas.entries()].sort(([a], [b]) => a - b)) {
      partitions.set(partition, {
        replicas: list,
        addingReplicas: adding.get(partition) ?? [],
        removingReplicas: removing.get(partition) ?? [],
      });
    }
    return { topicId, partitions };
  });
}

function readReplicaMap(map: JsonObject): Map<PartitionId, BrokerId[]> {
  const out = new Map<PartitionId, BrokerId[]>();
  for (const key of map.keys()) {
    if (!/^\d{1,10}$/.test(key) || Number(key) > 0x7fffffff) map.fail(key, 'is not a partition number');
    const replicas = map.intArray(key, BROKER_ID) as BrokerId[];
    if (new Set(replicas).size !== replicas.length) map.fail(key, 'lists a replica twice');
    out.set(Number(key) as PartitionId, replicas);
  }
  return out;
}

/** Kafka's Uuid string: 16 bytes in base64url without padding, 22 characters. */
export function isUuidString(text: string): boolean {
  return /^[A-Za-z0-9_-]{21}[AQgw]$/.test(text);
}

/** 0 when the leader was elected from the ISR; 1 while a leader elected uncleanly is recovering. */
export type LeaderRecoveryState = 0 | 1;

export interface PartitionState {
  /** -1 when the partition has no leader. */
  readonly leader: BrokerId;
  readonly leaderEpoch: LeaderEpoch;
  readonly isr: readonly BrokerId[];
  /** The epoch of the controller that wrote this state. */
  readonly controllerEpoch: number;
  readonly leaderRecoveryState: LeaderRecoveryState;
}

export function encodePartitionState(state: PartitionState): Uint8Array {
  return encodeJson({
    controller_epoch: state.controllerEpoch,
    leader: state.leader,
    version: 1,
    leader_epoch: state.leaderEpoch,
    isr: state.isr,
    ...(state.leaderRecoveryState === 0 ? {} : { leader_recovery_state: state.leaderRecoveryState }),
  });
}

export function decodePartitionState(bytes: Uint8Array): Decoded<PartitionState> {
  return decodeJson('partition state', bytes, (json) => {
    json.version([1]);
    const isr = json.intArray('isr', BROKER_ID) as BrokerId[];
    if (new Set(isr).size !== isr.length) json.fail('isr', 'lists a replica twice');
    const recovery = json.intOr('leader_recovery_state', 0, { min: 0, max: 1 });
    return {
      leader: json.int('leader', { min: -1 }) as BrokerId,
      leaderEpoch: json.int('leader_epoch', { min: 0 }) as LeaderEpoch,
      isr,
      controllerEpoch: json.int('controller_epoch', { min: 0 }),
      leaderRecoveryState: recovery as LeaderRecoveryState,
    };
  });
}
