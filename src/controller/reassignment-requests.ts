// Partition reassignment requests (AlterPartitionReassignments, ListPartitionReassignments) and the step that
// finishes a reassignment once its target replicas are in sync. The rules are in reassignment.ts; this file
// applies them through the controller core, as events of the controller's queue.

import type { BrokerId, PartitionId } from '../common/ids.js';
import { ErrorCode } from '../protocol/errors.js';
import type {
  AlterPartitionReassignmentsRequest,
  AlterPartitionReassignmentsResponse,
  AlterPartitionReassignmentsResponseReassignablePartitionResponse,
} from '../protocol/messages/45-alter-partition-reassignments.js';
import type {
  ListPartitionReassignmentsRequest,
  ListPartitionReassignmentsResponse,
  ListPartitionReassignmentsResponseOngoingTopicReassignment,
} from '../protocol/messages/46-list-partition-reassignments.js';
import type { TopicPartition } from './context.js';
import { type ControllerCore, partitionKey, sameList } from './controller-core.js';
import {
  finishedLeadership,
  isReassigning,
  movingAssignment,
  movingLeadership,
  originalReplicas,
  targetInSync,
  targetProblem,
} from './reassignment.js';
import type { ApiError } from './replica-assignment.js';

export async function onAlterReassignments(
  core: ControllerCore,
  request: AlterPartitionReassignmentsRequest,
): Promise<AlterPartitionReassignmentsResponse> {
  const ctx = core.ctx;
  if (ctx === null) {
    return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null, responses: [] };
  }
  const responses = [];
  for (const t of request.topics) {
    const partitions: AlterPartitionReassignmentsResponseReassignablePartitionResponse[] = [];
    for (const p of t.partitions) {
      const tp = { topic: t.name, partition: p.partitionIndex as PartitionId };
      const problem =
        core.ctx === ctx
          ? await reassign(core, tp, p.replicas as BrokerId[] | null)
          : { errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'The controller moved.' };
      partitions.push({
        partitionIndex: p.partitionIndex,
        errorCode: problem?.errorCode ?? ErrorCode.NONE,
        errorMessage: problem?.errorMessage ?? null,
      });
    }
    responses.push({ name: t.name, partitions });
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, responses };
}

/** Starts, replaces or cancels (target null) the reassignment of one partition. */
export async function reassign(
  core: ControllerCore,
  tp: TopicPartition,
  target: BrokerId[] | null,
): Promise<ApiError | null> {
  const ctx = core.ctx!;
  const entry = ctx.partition(tp);
  if (entry === undefined || entry.leadership === null || ctx.isDeleting(tp.topic)) {
    return {
      errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      errorMessage: 'The partition does not exist.',
    };
  }
  if (target === null) {
    if (!isReassigning(entry.assignment)) {
      return {
        errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
        errorMessage: `No reassignment is in progress for partition ${tp.topic}-${tp.partition}.`,
      };
    }
    return finishReassignment(core, tp, originalReplicas(entry.assignment));
  }
  const moving = movingAssignment(entry.assignment, target);
  const eligible = new Set([...ctx.liveBrokers.keys()].filter((b) => ctx.liveness.eligible(b)));
  const problem = targetProblem(target, moving.addingReplicas, eligible);
  if (problem !== null) return problem;
  if (!isReassigning(moving)) {
    // Back to the original replicas (a cancel), or only their order changes: finish at once.
    if (!isReassigning(entry.assignment) && sameList(entry.assignment.replicas, target)) return null;
    return finishReassignment(core, tp, target);
  }
  const dropped = entry.assignment.addingReplicas.filter((r) => !moving.replicas.includes(r));
  const next = movingLeadership(moving, entry.leadership, ctx.liveness);
  if (next === null) {
    return {
      errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: `No replica of [${moving.replicas.join(', ')}] is alive and in sync for ${tp.topic}-${tp.partition}.`,
    };
  }
  const written = await core.writeAssignmentAndState(tp, moving, next, entry.partitionEpoch);
  if (written !== null) return written;
  core.logger.info(`reassigning ${tp.topic}-${tp.partition} to [${target.join(',')}]`);
  core.reassignmentStarted(tp, target);
  core.propagate([{ tp, created: false }]);
  const adding = new Set([partitionKey(tp)]);
  for (const r of moving.addingReplicas) if (ctx.liveBrokers.has(r)) core.sendLeaderAndIsr(r, [tp], adding);
  core.sendStopReplica(dropped, [tp], true);
  if (targetInSync(moving, next)) return finishReassignment(core, tp, target);
  return null;
}

/** Makes `target` the partition's replicas, moving leadership and the ISR inside it, and stops the others. */
export async function finishReassignment(
  core: ControllerCore,
  tp: TopicPartition,
  target: BrokerId[],
): Promise<ApiError | null> {
  const ctx = core.ctx!;
  const entry = ctx.partition(tp)!;
  const next = finishedLeadership(target, entry.leadership!, ctx.liveness);
  if (next === null) {
    return {
      errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: `No replica of [${target.join(', ')}] is alive and in sync for ${tp.topic}-${tp.partition}.`,
    };
  }
  const removed = entry.assignment.replicas.filter((r) => !target.includes(r));
  const finished = { replicas: target, addingReplicas: [], removingReplicas: [] };
  const written = await core.writeAssignmentAndState(tp, finished, next, entry.partitionEpoch);
  if (written !== null) return written;
  core.logger.info(`partition ${tp.topic}-${tp.partition} now has replicas [${target.join(',')}]`);
  core.propagate([{ tp, created: false }]);
  core.sendStopReplica(removed, [tp], true);
  core.reassignmentFinished(tp, target);
  return null;
}

/** Finishes the reassignments whose target replicas have all joined the ISR. */
export async function finishSyncedReassignments(
  core: ControllerCore,
  tps: readonly TopicPartition[],
): Promise<void> {
  for (const tp of tps) {
    const ctx = core.ctx;
    const entry = ctx?.partition(tp);
    if (ctx == null || entry?.leadership == null || !isReassigning(entry.assignment)) continue;
    if (!targetInSync(entry.assignment, entry.leadership)) continue;
    const target = entry.assignment.replicas.filter((r) => !entry.assignment.removingReplicas.includes(r));
    const problem = await finishReassignment(core, tp, target);
    if (problem !== null)
      core.logger.warn(`finishing the reassignment of ${tp.topic}-${tp.partition}: ${problem.errorMessage}`);
  }
}

export function onListReassignments(
  core: ControllerCore,
  request: ListPartitionReassignmentsRequest,
): ListPartitionReassignmentsResponse {
  const ctx = core.ctx;
  if (ctx === null)
    return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null, topics: [] };
  const asked: TopicPartition[] =
    request.topics === null
      ? [...ctx.allPartitions()].map(({ topic, partition }) => ({ topic, partition }))
      : request.topics.flatMap((t) =>
          t.partitionIndexes.map((p) => ({ topic: t.name, partition: p as PartitionId })),
        );
  const byTopic = new Map<string, ListPartitionReassignmentsResponseOngoingTopicReassignment>();
  for (const tp of asked) {
    const entry = ctx.partition(tp);
    if (entry === undefined || !isReassigning(entry.assignment)) continue;
    const topic = byTopic.get(tp.topic) ?? { name: tp.topic, partitions: [] };
    byTopic.set(tp.topic, topic);
    topic.partitions.push({
      partitionIndex: tp.partition,
      replicas: [...entry.assignment.replicas],
      addingReplicas: [...entry.assignment.addingReplicas],
      removingReplicas: [...entry.assignment.removingReplicas],
    });
  }
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    topics: [...byTopic.values()],
  };
}
