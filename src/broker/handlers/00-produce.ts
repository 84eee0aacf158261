// Produce (0): each partition's records are validated and appended by its leader (see replica/partition.ts).
// Offsets are assigned at once; the bytes reach the log file off the event loop. acks=1 answers once they are
// written (Kafka's append to the page cache; on disk too when the log acknowledges after fsync), acks=-1 then
// waits in the produce purgatory until the high watermark passes the appended records with min.insync.replicas
// in the ISR (else NOT_ENOUGH_REPLICAS_AFTER_APPEND), this broker stops leading (NOT_LEADER_OR_FOLLOWER) or the
// request's timeout passes (REQUEST_TIMED_OUT): see replica/replicated-append.ts. acks=0 answers nothing, so a request that failed closes the connection, as in
// Kafka: the client has no other way to learn of the error. Its request still counts as in flight on the
// connection until its bytes are written, which bounds what one producer can queue.

import { tpKey } from '../../coordinator/transaction/transaction-coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  ProduceRequest,
  ProduceResponse,
  ProduceResponsePartitionProduceResponse,
} from '../../protocol/messages/00-produce.js';
import { BATCH_HEADER_BYTES, batchHeader, CURRENT_MAGIC } from '../../protocol/records/batch-header.js';
import { ApiKey } from '../../protocol/registry.js';
import type { AppendDone } from '../../storage/log.js';
import { defineHandler, type RequestContext } from '../api-handler.js';
import { AclOperation, authorizeTopic, authorizeTransactionalId } from '../authorization.js';
import { INTERNAL_TOPICS } from '../metadata/metadata-cache.js';
import { leaderPartition } from '../replica/leader-lookup.js';
import type { LeaderAppendResult } from '../replica/partition.js';
import { awaitReplication, type ReplicationWait } from '../replica/replicated-append.js';
import {
  type VerificationFailure,
  type VerificationGuard,
  verifyTransactionalProduce,
} from './produce-txn-verification.js';

const NO_LEADER = { leaderId: -1, leaderEpoch: -1 };

/**
 * The one client id whose produce requests may write to the internal topics (Kafka's AdminUtils.ADMIN_CLIENT_ID).
 * Every other client is refused INVALID_TOPIC_EXCEPTION there, as Kafka's ReplicaManager does: the group and
 * transaction coordinators own what those logs hold, write them themselves (not through Produce), and read every
 * record back when they load a partition; a record they did not write could corrupt or stop that load.
 */
const ADMIN_CLIENT_ID = '__admin_client';

/** Whether a partition's first batch is a transactional one (Kafka's RequestUtils.hasTransactionalRecords). */
function hasTransactionalRecords(request: ProduceRequest): boolean {
  for (const topic of request.topicData) {
    for (const data of topic.partitionData) {
      const records = data.records;
      if (
        records !== null &&
        records.length >= BATCH_HEADER_BYTES &&
        batchHeader.magic(records) === CURRENT_MAGIC &&
        batchHeader.isTransactional(records)
      ) {
        return true;
      }
    }
  }
  return false;
}

/** An acks=-1 append waiting for replication (see replica/replicated-append.ts), with the response it fills. */
interface PendingPartition extends ReplicationWait {
  readonly response: ProduceResponsePartitionProduceResponse;
}

/**
 * The appends of one request whose bytes are not yet written (see Log.appendQueued): one counter, and one promise
 * only when the request has to wait, for all its partitions.
 */
class RequestWrites {
  private unwritten = 0;
  private resolveAll: (() => void) | null = null;

  /** The `done` of a partition's append: a failed write answers that partition with a storage error. */
  doneFor(response: ProduceResponsePartitionProduceResponse): AppendDone {
    return (err) => {
      if (err !== null) storageFailed(response);
      if (--this.unwritten === 0) this.resolveAll?.();
    };
  }

  /** The append that was just given `doneFor`'s callback is pending: its callback will be called. */
  pending(): void {
    this.unwritten++;
  }

  /** Settles once every pending append is written (or failed); null when none is left. */
  allWritten(): Promise<void> | null {
    if (this.unwritten === 0) return null;
    return new Promise((resolve) => {
      this.resolveAll = resolve;
    });
  }
}

export const produceHandler = defineHandler<ProduceRequest, ProduceResponse>({
  apiKey: ApiKey.PRODUCE,
  minVersion: 0,
  maxVersion: 11,
  handle(context, request) {
    // Authorization as Kafka's KafkaApis: a transactional producer needs WRITE on its transactional id (else the
    // whole request fails), then each topic needs WRITE. Transactional batches without a transactional id are
    // refused the same way, as Kafka does with or without an authorizer: no coordinator knows the transaction they
    // would open, so no marker would ever end it, and it would hold back read_committed consumers for good (KIP-890
    // verification cannot help: it asks the coordinator of a transactional id).
    const transactionalDenied =
      request.transactionalId !== null
        ? !authorizeTransactionalId(context, AclOperation.WRITE, request.transactionalId)
        : hasTransactionalRecords(request);
    // KIP-890: partitions whose first transactional batch the coordinator says was not added to the transaction;
    // a coordinator on another broker answers later, and the appends wait for it.
    const unverified = transactionalDenied
      ? null
      : verifyTransactionalProduce(context.services, request, context.apiVersion);
    if (unverified instanceof Promise) {
      return unverified.then((remote) =>
        produce(context, request, transactionalDenied, remote.failures, remote.guards),
      );
    }
    return produce(context, request, transactionalDenied, unverified);
  },
});

function produce(
  context: RequestContext,
  request: ProduceRequest,
  transactionalDenied: boolean,
  unverified: ReadonlyMap<string, VerificationFailure> | null,
  guards: ReadonlyMap<string, VerificationGuard> | null = null,
): ProduceResponse | Promise<ProduceResponse | null> | null {
  const { clock } = context.services;
  const validAcks = request.acks === -1 || request.acks === 0 || request.acks === 1;
  const now = clock.nowMs();
  // An acks=1 request whose appends were written inline (their logs' queues were empty) is answered at once,
  // without a promise.
  const writes = new RequestWrites();
  let pending = null as PendingPartition[] | null;
  const responses = request.topicData.map((topic) => {
    const denied = transactionalDenied
      ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
      : authorizeTopic(context, AclOperation.WRITE, topic.name)
        ? ErrorCode.NONE
        : ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    const internalRefused = INTERNAL_TOPICS.has(topic.name) && context.clientId !== ADMIN_CLIENT_ID;
    return {
      name: topic.name,
      partitionResponses: topic.partitionData.map((data): ProduceResponsePartitionProduceResponse => {
        if (!validAcks) return partitionResponse(data.index, ErrorCode.INVALID_REQUIRED_ACKS);
        if (denied !== ErrorCode.NONE) return partitionResponse(data.index, denied);
        // A partition the cluster does not know stays UNKNOWN_TOPIC_OR_PARTITION (leaderPartition), as in Kafka,
        // whose KafkaApis answers those before its ReplicaManager looks at internal topics.
        if (internalRefused && context.services.metadata.partition(topic.name, data.index) !== undefined) {
          return partitionResponse(data.index, ErrorCode.INVALID_TOPIC_EXCEPTION);
        }
        const partition = leaderPartition(context.services, topic.name, data.index);
        if (typeof partition === 'number') return partitionResponse(data.index, partition);
        if (data.records === null) return partitionResponse(data.index, ErrorCode.CORRUPT_MESSAGE);
        const failure = unverified?.get(tpKey(topic.name, data.index));
        if (failure !== undefined) {
          return { ...partitionResponse(data.index, failure.errorCode), errorMessage: failure.errorMessage };
        }
        // Checked in the same step as the append: nothing can end the transaction in between.
        const guard = guards?.get(tpKey(topic.name, data.index));
        if (guard !== undefined && !partition.log.producerState.verifiedBy(guard.producerId, guard.guard)) {
          // Kafka's UnifiedLog.append throws InvalidTxnStateException here, answered without its text.
          return partitionResponse(data.index, ErrorCode.INVALID_TXN_STATE);
        }
        // Filled from the append's result below; the append's `done` may mark it failed later.
        const response = partitionResponse(data.index, ErrorCode.NONE);
        const result = partition.appendAsLeader(
          data.records,
          request.acks,
          partition.settings.minInsyncReplicas,
          now,
          writes.doneFor(response),
          context.apiVersion,
        );
        context.services.topicStats?.produced(topic.name, data.records.length, result);
        response.errorCode = result.errorCode;
        response.baseOffset = BigInt(result.baseOffset);
        response.logAppendTimeMs = BigInt(result.logAppendTimeMs);
        response.logStartOffset = BigInt(partition.log.logStartOffset);
        if (result.recordErrors !== undefined) response.recordErrors = [...result.recordErrors];
        response.errorMessage = appendErrorMessage(result);
        if (result.errorCode === ErrorCode.NONE) {
          if (result.pending) writes.pending();
          if (request.acks === -1) {
            pending ??= [];
            pending.push({ partition, lastOffset: result.lastOffset, outcome: null, response });
          }
        }
        return response;
      }),
    };
  });
  // producer_byte_rate counts the whole request, as Kafka's request.sizeInBytes; acks=0 requests are not
  // measured against request_percentage (Kafka: no response to throttle).
  const quotas = context.services.quotas;
  if (quotas.produce.quotasEnabled) {
    const user = context.quotaUser;
    context.throttle(
      quotas.produce.recordAndGetThrottleTimeMs(user, context.clientId, context.requestBytes, now),
    );
  }
  if (request.acks === 0) context.exemptFromRequestQuota();
  // The log and its tail cache hold what they keep of the frame through pool references (see
  // Log.appendQueued); nothing else refers to it, so its memory may be reused once the request is answered.
  context.allowFrameReuse();
  const answer: ProduceResponse = { responses, throttleTimeMs: 0, nodeEndpoints: [] };
  const written = writes.allWritten();
  if (request.acks === 0) {
    if (written === null) return closeIfFailed(context, answer);
    return written.then(() => closeIfFailed(context, answer));
  }
  const replicas = pending;
  if (replicas === null) return written === null ? answer : written.then(() => answer);
  const afterWrites = (): ProduceResponse | Promise<ProduceResponse> => {
    // A partition whose write failed meanwhile is answered with its storage error, not waited for.
    const replicating = replicas.filter((p) => p.response.errorCode === ErrorCode.NONE);
    return replicating.length > 0 ? replicate(context, request, replicating, answer) : answer;
  };
  // Even with nothing to wait for, replication is looked at in a later microtask: the log tells the partition
  // of an inline write in a microtask queued before this one, and the high watermark may have moved by then.
  return (written ?? Promise.resolve()).then(afterWrites);
}

/**
 * The text a partition's answer carries, as Kafka 3.9's LogAppendResult.errorMessage: only a refusal of named
 * records (KIP-467's record errors, Kafka's RecordValidationException, the one exception it marks
 * hasCustomErrorMessage) sends its message. Every other refusal of the append (MESSAGE_TOO_LARGE,
 * NOT_ENOUGH_REPLICAS, KAFKA_STORAGE_ERROR, CORRUPT_MESSAGE, a whole batch's INVALID_RECORD, ...) is answered by its
 * code alone, with a null message, so Brook's own wording stays inside the broker.
 */
function appendErrorMessage(result: LeaderAppendResult): string | null {
  return result.recordErrors !== undefined && result.recordErrors.length > 0 ? result.errorMessage : null;
}

/**
 * A write that failed after the offsets were assigned: the log directory is in trouble, as Kafka reports it (its
 * KafkaStorageException, answered without a message).
 */
function storageFailed(response: ProduceResponsePartitionProduceResponse): void {
  response.errorCode = ErrorCode.KAFKA_STORAGE_ERROR;
  response.baseOffset = -1n;
  response.errorMessage = null;
}

/** acks=0: no response; a partition that failed closes the connection (after the responses before it). */
function closeIfFailed(context: RequestContext, answer: ProduceResponse): null {
  for (const topic of answer.responses) {
    for (const p of topic.partitionResponses) {
      if (p.errorCode !== ErrorCode.NONE) {
        context.connection.closeAfterResponses(
          `closing connection: acks=0 produce to ${topic.name}-${p.index} failed with error ${p.errorCode}`,
        );
        return null;
      }
    }
  }
  return null;
}

/**
 * acks=-1: the request answers once every partition's wait has ended (replica/replicated-append.ts has the
 * rules: replicated with enough in-sync replicas, NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER_OR_FOLLOWER when
 * this broker stops leading it, REQUEST_TIMED_OUT).
 */
function replicate(
  context: RequestContext,
  request: ProduceRequest,
  pending: readonly PendingPartition[],
  answer: ProduceResponse,
): Promise<ProduceResponse> {
  context.markWaiting();
  return new Promise((resolve) => {
    awaitReplication(context.services, pending, request.timeoutMs, () => {
      for (const p of pending) {
        const outcome = p.outcome ?? ErrorCode.REQUEST_TIMED_OUT;
        if (outcome !== ErrorCode.NONE) p.response.errorCode = outcome;
      }
      resolve(answer);
    });
  });
}

/** A partition's answer with nothing but its error code (NONE: the append's result fills in the rest). */
function partitionResponse(index: number, errorCode: number): ProduceResponsePartitionProduceResponse {
  return {
    index,
    errorCode,
    baseOffset: -1n,
    logAppendTimeMs: -1n,
    logStartOffset: -1n,
    recordErrors: [],
    errorMessage: null,
    currentLeader: NO_LEADER,
  };
}
