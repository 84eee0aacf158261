// What a broker answers before it serves (broker/not-ready.ts): the controller's requests get an error in their
// own response (STALE_BROKER_EPOCH when known to be made for an earlier run of the broker, else the retriable
// COORDINATOR_LOAD_IN_PROGRESS, on which the controller sends again), logged at debug; any other request closes
// its connection quietly (NotReadyError), not as malformed input.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { notReadyHandler } from '../../src/broker/not-ready.js';
import type { Logger, LogLevel } from '../../src/common/logger.js';
import { NotReadyError, type Request } from '../../src/network/request.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { decodeResponseHeader } from '../../src/protocol/headers.js';
import { Reader } from '../../src/protocol/primitives/index.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { WireClient } from '../helpers/wire-client.js';

const BODIES: Record<number, (brokerEpoch: bigint) => unknown> = {
  [ApiKey.LEADER_AND_ISR]: (brokerEpoch) => ({
    controllerId: 1,
    isKRaftController: false,
    controllerEpoch: 1,
    brokerEpoch,
    type: 0,
    ungroupedPartitionStates: [],
    topicStates: [],
    liveLeaders: [],
  }),
  [ApiKey.UPDATE_METADATA]: (brokerEpoch) => ({
    controllerId: 1,
    isKRaftController: false,
    type: 0,
    controllerEpoch: 1,
    brokerEpoch,
    ungroupedPartitionStates: [],
    topicStates: [],
    liveBrokers: [],
  }),
  [ApiKey.STOP_REPLICA]: (brokerEpoch) => ({
    controllerId: 1,
    isKRaftController: false,
    controllerEpoch: 1,
    brokerEpoch,
    deletePartitions: false,
    ungroupedPartitions: [],
    topics: [],
    topicStates: [],
  }),
};

function capturingLogger(lines: [LogLevel, string][]): Logger {
  const logger: Logger = {
    trace: (m) => lines.push(['trace', m]),
    debug: (m) => lines.push(['debug', m]),
    info: (m) => lines.push(['info', m]),
    warn: (m) => lines.push(['warn', m]),
    error: (m) => lines.push(['error', m]),
    child: () => logger,
    enabled: () => true,
  } as Logger;
  return logger;
}

/** Calls the handler as the network layer would; answers the decoded response's top-level error code. */
function answer(handler: ReturnType<typeof notReadyHandler>, apiKey: number, version: number, epoch: bigint) {
  const frame = WireClient.encode(apiKey, version, 42, BODIES[apiKey]!(epoch));
  const request = { apiKey, apiVersion: version, correlationId: 42, frame } as unknown as Request;
  const chunks = handler(request);
  assert.ok(chunks !== null && !(chunks instanceof Promise));
  const r = new Reader(Buffer.concat(chunks));
  assert.equal(decodeResponseHeader(r, apiKey, version).correlationId, 42);
  return (getApi(apiKey).decodeResponse(r, version) as { errorCode: number }).errorCode;
}

test('before registering, a controller request may be for this run (the controller saw the registration first): retriable COORDINATOR_LOAD_IN_PROGRESS, never STALE_BROKER_EPOCH', () => {
  const lines: [LogLevel, string][] = [];
  const handler = notReadyHandler(capturingLogger(lines), () => -1);
  assert.equal(answer(handler, ApiKey.LEADER_AND_ISR, 7, 5n), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(answer(handler, ApiKey.UPDATE_METADATA, 8, 5n), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(answer(handler, ApiKey.STOP_REPLICA, 4, 5n), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.ok(lines.length > 0 && lines.every(([level]) => level === 'debug'), JSON.stringify(lines));
});

test('once registered, a request for this run is answered with the retriable COORDINATOR_LOAD_IN_PROGRESS', () => {
  const lines: [LogLevel, string][] = [];
  const handler = notReadyHandler(capturingLogger(lines), () => 10);
  assert.equal(answer(handler, ApiKey.LEADER_AND_ISR, 7, 10n), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(answer(handler, ApiKey.UPDATE_METADATA, 8, 10n), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(answer(handler, ApiKey.UPDATE_METADATA, 5, 10n), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(answer(handler, ApiKey.STOP_REPLICA, 4, 10n), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(
    answer(handler, ApiKey.UPDATE_METADATA, 8, 9n),
    ErrorCode.STALE_BROKER_EPOCH,
    'an older epoch',
  );
  assert.ok(lines.every(([level]) => level === 'debug'));
});

test('any other request closes its connection as not ready, not as malformed', () => {
  const handler = notReadyHandler(capturingLogger([]), () => 10);
  const frame = WireClient.encode(ApiKey.API_VERSIONS, 3, 1, {
    clientSoftwareName: 'x',
    clientSoftwareVersion: '1',
  });
  const request = {
    apiKey: ApiKey.API_VERSIONS,
    apiVersion: 3,
    correlationId: 1,
    frame,
  } as unknown as Request;
  assert.throws(() => handler(request), NotReadyError);
});
