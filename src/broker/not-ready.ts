// What the broker answers before it serves. Its listeners are bound before it registers in /brokers/ids (the
// registration carries the bound ports), and a controller sends LeaderAndIsr, UpdateMetadata and StopReplica as
// soon as it sees a registration, so these requests can arrive while the broker is still starting. They are
// answered with an error in their own response, and the controller acts on it:
//
// - STALE_BROKER_EPOCH for a broker epoch older than this run's registration: the request was made for an earlier
//   run of this broker (restarted before ZooKeeper expired the old session), as Kafka answers it. The controller
//   drops it; it sends everything again for the new registration.
// - COORDINATOR_LOAD_IN_PROGRESS otherwise, a retriable code on which the controller sends the request again after
//   a backoff (controller/channel.ts). Before this broker has its own registration's epoch it cannot tell an
//   earlier run's request from this run's: the controller sees the registration (its watch) at the same time as
//   this broker learns its epoch (the create's answer), and may send at once. Refusing such a request as stale
//   left the broker without metadata until the next change; retried, it is answered properly once the epoch is
//   known (or dropped by the controller when the registration it was made for goes away). Kafka has no answer for
//   this: its brokers accept connections only when ready, so the controller's sends are retried there too.
//
// Any other request closes its connection, as Kafka's refused connection would; clients retry. None of this is
// malformed input: it is logged at debug.

import type { Logger } from '../common/logger.js';
import { NotReadyError, type Request, type RequestHandler, type Response } from '../network/request.js';
import { ErrorCode, errorName } from '../protocol/errors.js';
import { decodeRequestHeader, encodeResponseHeader } from '../protocol/headers.js';
import { DecodeError, Reader, Writer } from '../protocol/primitives/index.js';
import { ApiKey, findApi } from '../protocol/registry.js';
import { leaderAndIsrHandler } from './handlers/04-leader-and-isr.js';
import { stopReplicaHandler } from './handlers/05-stop-replica.js';
import { updateMetadataHandler } from './handlers/06-update-metadata.js';

const CONTROLLER_HANDLERS = new Map(
  [leaderAndIsrHandler, stopReplicaHandler, updateMetadataHandler].map((h) => [h.apiKey, h]),
);

/**
 * The request handler until the broker serves. `brokerEpoch()` answers this run's broker epoch once registered,
 * else -1.
 */
export function notReadyHandler(logger: Logger, brokerEpoch: () => number): RequestHandler {
  return (request: Request): Response => {
    const handler = CONTROLLER_HANDLERS.get(request.apiKey);
    const api = findApi(request.apiKey);
    if (handler === undefined || api === undefined) {
      throw new NotReadyError(`the broker is still starting (API key ${request.apiKey})`);
    }
    const version = request.apiVersion;
    if (version < handler.minVersion || version > handler.maxVersion) {
      throw new DecodeError('unsupported-version', `${api.name} version ${version} is not supported`);
    }
    const reader = new Reader(request.frame);
    decodeRequestHeader(reader);
    const body = api.decodeRequest(reader, version) as { brokerEpoch: bigint };
    const errorCode = notReadyError(body.brokerEpoch, brokerEpoch());
    logger.debug(`${api.name} arrived before the broker serves: answered ${errorName(errorCode)}`);
    const w = new Writer(64);
    encodeResponseHeader(w, request.apiKey, version, request.correlationId);
    api.encodeResponse(w, version, errorResponse(request.apiKey, errorCode));
    return w.chunksOut();
  };
}

/** STALE_BROKER_EPOCH for a request known to be for an earlier run of this broker, else COORDINATOR_LOAD_IN_PROGRESS. */
export function notReadyError(requestEpoch: bigint, registeredEpoch: number): number {
  const stale = registeredEpoch >= 0 && requestEpoch >= 0n && requestEpoch < BigInt(registeredEpoch);
  return stale ? ErrorCode.STALE_BROKER_EPOCH : ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
}

function errorResponse(apiKey: number, errorCode: number): unknown {
  switch (apiKey) {
    case ApiKey.LEADER_AND_ISR:
      return { errorCode, partitionErrors: [], topics: [] };
    case ApiKey.STOP_REPLICA:
      return { errorCode, partitionErrors: [] };
    default:
      return { errorCode };
  }
}
