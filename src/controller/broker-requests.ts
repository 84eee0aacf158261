// The controller's answers to brokers and administrators: AlterPartition (ISR changes from leaders),
// ControlledShutdown, ElectLeaders, and the automatic preferred leader election. Each runs as one event of the
// controller's queue (see controller-core.ts): it checks the request against the context, writes what changes
// through the core, and answers from the state that was written.

import type { BrokerId, LeaderEpoch, PartitionId } from '../common/ids.js';
import { ErrorCode } from '../protocol/errors.js';
import type {
  ControlledShutdownRequest,
  ControlledShutdownResponse,
} from '../protocol/messages/07-controlled-shutdown.js';
import type {
  ElectLeadersRequest,
  ElectLeadersResponse,
  ElectLeadersResponseReplicaElectionResult,
} from '../protocol/messages/43-elect-leaders.js';
import type {
  AlterPartitionRequest,
  AlterPartitionResponse,
  AlterPartitionResponsePartitionData,
  AlterPartitionResponseTopicData,
} from '../protocol/messages/56-alter-partition.js';
import type { PartitionEntry, TopicPartition } from './context.js';
import { type ControllerCore, partitionKey, type StateWrite, sameList } from './controller-core.js';
import {
  controlledShutdownLeadership,
  type Leadership,
  preferredLeaderElection,
  uncleanLeaderElection,
} from './leader-election.js';
import { isReassigning } from './reassignment.js';
import { finishSyncedReassignments } from './reassignment-requests.js';

export async function onAlterPartition(
  core: ControllerCore,
  request: AlterPartitionRequest,
  version: number,
): Promise<AlterPartitionResponse> {
  const ctx = core.ctx;
  if (ctx === null) return alterPartitionError(ErrorCode.NOT_CONTROLLER);
  const broker = request.brokerId as BrokerId;
  const known = ctx.liveBrokers.get(broker);
  // As Kafka's ZooKeeper-mode controller (KafkaController.tryProcessAlterPartition): the broker epoch must be the
  // live registration's exactly; -1 is no wildcard here, so a leader that has not learned its epoch cannot shrink
  // or grow an ISR.
  if (known === undefined || BigInt(known.epoch) !== request.brokerEpoch) {
    return alterPartitionError(ErrorCode.STALE_BROKER_EPOCH);
  }
  // As Kafka's controllers (KafkaController.tryProcessAlterPartition, ReplicationControlManager): the errors that
  // KIP-841 added are answered from v2, the version that introduced them; older leaders get OPERATION_NOT_ATTEMPTED
  // for an ineligible replica, and topics named by id (v2+) that the controller does not know get UNKNOWN_TOPIC_ID.
  const ineligible = version >= 2 ? ErrorCode.INELIGIBLE_REPLICA : ErrorCode.OPERATION_NOT_ATTEMPTED;
  const answers = new Map<string, AlterPartitionResponsePartitionData>();
  const writes: StateWrite[] = [];
  const topics: { name: string; id: string; tps: TopicPartition[] }[] = [];
  for (const t of request.topics) {
    // v2+ carries no name on the wire; a request made in this process may name the topic too.
    const name = t.topicName !== '' ? t.topicName : ctx.topicsById.get(t.topicId);
    const tps: TopicPartition[] = [];
    topics.push({ name: name ?? '', id: t.topicId, tps });
    for (const p of t.partitions) {
      const tp = { topic: name ?? '', partition: p.partitionIndex as PartitionId };
      tps.push(tp);
      const fail = (errorCode: number): void => {
        answers.set(partitionKey(tp), partitionAnswer(p.partitionIndex, errorCode, null));
      };
      if (name === undefined) {
        fail(version >= 2 ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        continue;
      }
      const entry = ctx.partition(tp);
      if (entry === undefined || entry.leadership === null || ctx.isDeleting(name)) {
        fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        continue;
      }
      const current = entry.leadership;
      const newIsr = (
        p.newIsrWithEpochs.length > 0 ? p.newIsrWithEpochs.map((b) => b.brokerId) : p.newIsr
      ) as BrokerId[];
      if (p.partitionEpoch > entry.partitionEpoch || p.leaderEpoch > current.leaderEpoch) {
        // The leader knows a newer state than this controller: likely this controller was replaced.
        fail(ErrorCode.NOT_CONTROLLER);
        continue;
      }
      if (p.leaderEpoch < current.leaderEpoch) {
        fail(ErrorCode.FENCED_LEADER_EPOCH);
        continue;
      }
      if (current.leader !== broker) {
        fail(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        continue;
      }
      if (sameList(newIsr, current.isr) && p.leaderRecoveryState === current.leaderRecoveryState) {
        // Already in the requested state: answer it, which makes a retried request harmless.
        answers.set(
          partitionKey(tp),
          partitionAnswer(p.partitionIndex, ErrorCode.NONE, { entry, leadership: current }),
        );
        continue;
      }
      if (p.partitionEpoch < entry.partitionEpoch) {
        fail(ErrorCode.INVALID_UPDATE_VERSION);
        continue;
      }
      if (
        (p.leaderRecoveryState === 1 && newIsr.length > 1) ||
        (current.leaderRecoveryState === 0 && p.leaderRecoveryState === 1) ||
        !newIsr.includes(broker) ||
        new Set(newIsr).size !== newIsr.length
      ) {
        fail(ErrorCode.INVALID_REQUEST);
        continue;
      }
      const staleEpoch = p.newIsrWithEpochs.some((b) => {
        const live = ctx.liveBrokers.get(b.brokerId as BrokerId);
        return b.brokerEpoch !== -1n && live !== undefined && BigInt(live.epoch) !== b.brokerEpoch;
      });
      if (
        staleEpoch ||
        newIsr.some((r) => !entry.assignment.replicas.includes(r) || !ctx.liveness.eligible(r))
      ) {
        fail(ineligible);
        continue;
      }
      writes.push({
        tp,
        next: {
          leader: current.leader,
          leaderEpoch: current.leaderEpoch,
          isr: newIsr,
          leaderRecoveryState: p.leaderRecoveryState === 1 ? 1 : 0,
        },
        expectedVersion: entry.partitionEpoch,
      });
    }
  }
  const outcome = await core.writeStates(writes);
  if (outcome === null) return alterPartitionError(ErrorCode.NOT_CONTROLLER);
  for (const w of outcome.written) {
    const entry = ctx.partition(w.tp)!;
    answers.set(
      partitionKey(w.tp),
      partitionAnswer(w.tp.partition, ErrorCode.NONE, { entry, leadership: entry.leadership! }),
    );
  }
  if (outcome.conflicts.length > 0) {
    await core.refreshStates(outcome.conflicts);
    // The leader is told the state as it is in the store: it keeps its proposal pending until a LeaderAndIsr
    // (isr-manager.ts), and the state it did not know may be its own earlier proposal, committed by a write whose
    // answer was lost.
    if (core.ctx === ctx) core.propagate(outcome.conflicts.map((tp) => ({ tp, created: false })));
  }
  for (const tp of outcome.conflicts)
    answers.set(partitionKey(tp), partitionAnswer(tp.partition, ErrorCode.INVALID_UPDATE_VERSION, null));
  for (const w of writes) {
    if (!answers.has(partitionKey(w.tp)))
      answers.set(partitionKey(w.tp), partitionAnswer(w.tp.partition, ErrorCode.UNKNOWN_SERVER_ERROR, null));
  }
  if (outcome.written.length > 0 && core.ctx === ctx) {
    await finishSyncedReassignments(
      core,
      outcome.written.map((w) => w.tp),
    );
  }
  if (outcome.written.length > 0 && core.ctx === ctx) {
    core.sendUpdateMetadata(
      [...ctx.liveBrokers.keys()],
      outcome.written.map((w) => w.tp),
    );
  }
  const responseTopics: AlterPartitionResponseTopicData[] = topics.map((t) => ({
    topicName: t.name,
    topicId: t.id,
    partitions: t.tps.map((tp) => answers.get(partitionKey(tp))!),
  }));
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, topics: responseTopics };
}

export async function onControlledShutdown(
  core: ControllerCore,
  request: ControlledShutdownRequest,
): Promise<ControlledShutdownResponse> {
  const ctx = core.ctx;
  if (ctx === null) return { errorCode: ErrorCode.NOT_CONTROLLER, remainingPartitions: [] };
  const broker = request.brokerId as BrokerId;
  const known = ctx.liveBrokers.get(broker);
  if (known === undefined) return { errorCode: ErrorCode.BROKER_NOT_AVAILABLE, remainingPartitions: [] };
  // Only an older epoch is stale, as in Kafka's doControlledShutdown: a newer one is the broker's registration of a
  // new session that this controller has not processed yet, and the broker asking is the one to move away from.
  if (request.brokerEpoch !== -1n && request.brokerEpoch < BigInt(known.epoch)) {
    return { errorCode: ErrorCode.STALE_BROKER_EPOCH, remainingPartitions: [] };
  }
  ctx.shuttingDown.add(broker);
  const hosted = ctx.partitionsOn(broker).filter((tp) => {
    const entry = ctx.partition(tp)!;
    return entry.assignment.replicas.length > 1 && !ctx.isDeleting(tp.topic) && entry.leadership !== null;
  });
  const writes: StateWrite[] = [];
  const followerOf: TopicPartition[] = [];
  for (const tp of hosted) {
    const entry = ctx.partition(tp)!;
    const next = controlledShutdownLeadership(
      entry.assignment.replicas,
      entry.leadership!,
      broker,
      ctx.liveness,
    );
    if (entry.leadership!.leader !== broker) followerOf.push(tp);
    if (next !== null) writes.push({ tp, next, expectedVersion: entry.partitionEpoch });
  }
  const outcome = await core.writeStates(writes);
  if (outcome === null) return { errorCode: ErrorCode.NOT_CONTROLLER, remainingPartitions: [] };
  core.propagate(await changesToSend(core, outcome));
  if (followerOf.length > 0 && core.ctx === ctx) {
    core.sendStopReplica([broker], followerOf, false);
  }
  const remaining = hosted.filter((tp) => ctx.partition(tp)?.leadership?.leader === broker);
  return {
    errorCode: ErrorCode.NONE,
    remainingPartitions: remaining.map((tp) => ({ topicName: tp.topic, partitionIndex: tp.partition })),
  };
}

export async function onElectLeaders(
  core: ControllerCore,
  request: ElectLeadersRequest,
): Promise<ElectLeadersResponse> {
  const ctx = core.ctx;
  if (ctx === null)
    return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, replicaElectionResults: [] };
  const unclean = request.electionType === 1;
  const asked: TopicPartition[] =
    request.topicPartitions === null
      ? [...ctx.allPartitions()].map(({ topic, partition }) => ({ topic, partition }))
      : request.topicPartitions.flatMap((t) =>
          t.partitions.map((p) => ({ topic: t.topic, partition: p as PartitionId })),
        );
  const errors = new Map<string, { code: number; message: string | null }>();
  const writes: StateWrite[] = [];
  for (const tp of asked) {
    const entry = ctx.partition(tp);
    if (entry === undefined || ctx.isDeleting(tp.topic)) {
      errors.set(partitionKey(tp), {
        code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        message: 'The partition does not exist.',
      });
      continue;
    }
    if (entry.leadership === null) {
      errors.set(partitionKey(tp), {
        code: ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
        message: 'No replica of the partition is alive.',
      });
      continue;
    }
    const outcome = unclean
      ? uncleanLeaderElection(entry.assignment.replicas, entry.leadership, ctx.liveness)
      : preferredLeaderElection(entry.assignment.replicas, entry.leadership, ctx.liveness);
    if (!outcome.ok) {
      errors.set(partitionKey(tp), {
        code: ErrorCode[outcome.errorCode],
        message: electionMessage(outcome.errorCode, tp),
      });
      continue;
    }
    writes.push({ tp, next: outcome.next, expectedVersion: entry.partitionEpoch });
  }
  const outcome = await core.writeStates(writes);
  if (outcome === null)
    return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, replicaElectionResults: [] };
  const changes = await changesToSend(core, outcome);
  for (const tp of outcome.conflicts)
    errors.set(partitionKey(tp), {
      code: ErrorCode.REQUEST_TIMED_OUT,
      message: 'The partition changed during the election; retry.',
    });
  core.propagate(changes);
  const byTopic = new Map<string, ElectLeadersResponseReplicaElectionResult>();
  for (const tp of asked) {
    const error = errors.get(partitionKey(tp));
    // As Kafka (KafkaApis.handleElectLeaders): an election over all partitions lists only those elected or failed.
    // Listing every partition whose leader is already the right one would make admin clients' all() fail with
    // ElectionNotNeededException whenever any partition is balanced, that is almost always.
    if (request.topicPartitions === null && error?.code === ErrorCode.ELECTION_NOT_NEEDED) continue;
    const result = byTopic.get(tp.topic) ?? { topic: tp.topic, partitionResult: [] };
    byTopic.set(tp.topic, result);
    result.partitionResult.push({
      partitionId: tp.partition,
      errorCode: error?.code ?? ErrorCode.NONE,
      errorMessage: error?.message ?? null,
    });
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, replicaElectionResults: [...byTopic.values()] };
}

export async function onCheckLeaderBalance(core: ControllerCore): Promise<TopicPartition[]> {
  const ctx = core.ctx;
  if (ctx === null) return [];
  const percentage = core.imbalancePerBrokerPercentage;
  const byPreferred = new Map<BrokerId, TopicPartition[]>();
  for (const { topic, partition, entry } of ctx.allPartitions()) {
    const preferred = entry.assignment.replicas[0];
    if (preferred === undefined || entry.leadership === null || ctx.isDeleting(topic)) continue;
    const list = byPreferred.get(preferred) ?? [];
    list.push({ topic, partition });
    byPreferred.set(preferred, list);
  }
  const writes: StateWrite[] = [];
  for (const [broker, tps] of byPreferred) {
    const notLed = tps.filter((tp) => ctx.partition(tp)!.leadership!.leader !== broker);
    if (notLed.length * 100 <= percentage * tps.length) continue;
    for (const tp of notLed) {
      const entry = ctx.partition(tp)!;
      if (isReassigning(entry.assignment)) continue;
      const outcome = preferredLeaderElection(entry.assignment.replicas, entry.leadership!, ctx.liveness);
      if (outcome.ok) writes.push({ tp, next: outcome.next, expectedVersion: entry.partitionEpoch });
    }
  }
  if (writes.length === 0) return [];
  const outcome = await core.writeStates(writes);
  if (outcome === null) return [];
  const changes = await changesToSend(core, outcome);
  core.logger.info(`automatic preferred leader election moved ${outcome.written.length} partitions`);
  core.propagate(changes);
  return outcome.written.map((w) => w.tp);
}

/**
 * What to send after writing states: the partitions written, and those whose state a conflict made the controller
 * read back changed. Such a state may be this controller's own write whose reply was lost (ZooKeeper committed
 * it, then the connection dropped): no broker has been sent it, and its new leader would never learn that it
 * leads.
 */
async function changesToSend(
  core: ControllerCore,
  outcome: { written: readonly StateWrite[]; conflicts: readonly TopicPartition[] },
): Promise<{ tp: TopicPartition; created: boolean }[]> {
  const readBack = outcome.conflicts.length > 0 ? await core.refreshStates(outcome.conflicts) : [];
  return [...outcome.written.map((w) => w.tp), ...readBack].map((tp) => ({ tp, created: false }));
}

function alterPartitionError(errorCode: number): AlterPartitionResponse {
  return { throttleTimeMs: 0, errorCode, topics: [] };
}

function partitionAnswer(
  partitionIndex: number,
  errorCode: number,
  state: { entry: PartitionEntry; leadership: Leadership } | null,
): AlterPartitionResponsePartitionData {
  return {
    partitionIndex,
    errorCode,
    leaderId: state?.leadership.leader ?? -1,
    leaderEpoch: state?.leadership.leaderEpoch ?? (-1 as LeaderEpoch),
    isr: state === null ? [] : [...state.leadership.isr],
    leaderRecoveryState: state?.leadership.leaderRecoveryState ?? 0,
    partitionEpoch: state?.entry.partitionEpoch ?? -1,
  };
}

function electionMessage(code: string, tp: TopicPartition): string {
  switch (code) {
    case 'ELECTION_NOT_NEEDED':
      return `Leader election not needed for topic partition ${tp.topic}-${tp.partition}`;
    case 'PREFERRED_LEADER_NOT_AVAILABLE':
      return `Failed to elect leader for partition ${tp.topic}-${tp.partition}: the preferred replica is not alive or not in the ISR`;
    default:
      return `Failed to elect leader for partition ${tp.topic}-${tp.partition}: no eligible replica is alive`;
  }
}
