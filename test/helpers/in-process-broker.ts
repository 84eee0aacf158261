// A broker run inside the test's own process, with a request interceptor the test controls
// (src/broker/request-interceptor.ts): the in-broker counterpart of the TCP proxies in produce-proxy.ts, for tests
// that need to delay, drop, answer or rewrite particular requests. Same defaults as broker-process.ts (embedded
// coordination store, a fresh log directory removed on stop, unless one is given); logs go nowhere unless
// BROOK_TEST_LOG=1.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Broker } from '../../src/broker/broker.js';
import { loadBrokerConfig } from '../../src/broker/config/load-broker-config.js';
import {
  type InterceptedRequest,
  RequestInterception,
  type RequestInterceptor,
} from '../../src/broker/request-interceptor.js';
import { type Clock, systemClock } from '../../src/common/clock.js';
import { createLogger, type Logger, silentLogger } from '../../src/common/logger.js';

export interface InProcessBroker {
  readonly broker: Broker;
  readonly host: string;
  readonly port: number;
  readonly interception: RequestInterception;
  stop(): Promise<void>;
}

export async function startInProcessBroker(
  overrides: Record<string, string | number | boolean> = {},
  options: {
    readonly logger?: Logger;
    readonly clock?: Clock;
    /** A log directory to use and keep on stop (a restart on the same data); a fresh one, removed, by default. */
    readonly dataDir?: string;
    /** Installed before the start, so that it sees the first requests (the controller's, in a cluster). */
    readonly interceptor?: RequestInterceptor;
  } = {},
): Promise<InProcessBroker> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'brook-test-'));
  const text = new Map(
    Object.entries({
      'broker.id': 0,
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'log.dirs': dataDir,
      'offsets.topic.replication.factor': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
      'group.initial.rebalance.delay.ms': 0,
      ...overrides,
    }).map(([k, v]) => [k, String(v)]),
  );
  const logger =
    options.logger ?? (process.env.BROOK_TEST_LOG === '1' ? createLogger('brook') : silentLogger);
  const loaded = await loadBrokerConfig({ configPath: null, overrides: text, warn: (m) => logger.warn(m) });
  const interception = new RequestInterception();
  if (options.interceptor !== undefined) interception.set(options.interceptor);
  const broker = new Broker({
    ...loaded,
    clock: options.clock ?? systemClock,
    logger,
    requestInterception: interception,
  });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    interception.clear();
    await broker.stop();
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const [listener] = await broker.start();
    return { broker, host: listener!.host, port: listener!.port, interception, stop };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}

/** An interceptor for the requests of one API key only; the others pass. */
export function onKey<Body>(
  apiKey: number,
  interceptor: (request: InterceptedRequest<Body>) => unknown,
): RequestInterceptor {
  return (request) =>
    request.apiKey === apiKey ? interceptor(request as InterceptedRequest<Body>) : undefined;
}

/** A coordinator of internal-topic partitions (groups, transactions), as far as loading goes. */
export interface LoadingCoordinator {
  onLeadershipChange(partition: number, isLeader: boolean): void;
  readonly loading: boolean;
}

/**
 * Makes the next request of `apiKey` find the coordinator's partition 0 loading: leadership is dropped and taken
 * again just before the handler runs, and the load is deferred past it. The other requests pass.
 */
export function loadingOnNext(
  broker: InProcessBroker,
  apiKey: number,
  coordinator: LoadingCoordinator,
): void {
  broker.interception.set(
    onKey(apiKey, (request) => {
      broker.interception.clear();
      coordinator.onLeadershipChange(0, false);
      coordinator.onLeadershipChange(0, true);
      assert.ok(coordinator.loading, 'the partition is loading when the handler runs');
      return request.handle();
    }),
  );
}

/** Handles every request of `apiKey` only after `delayMs`. */
export function delayKey(apiKey: number, delayMs: number): RequestInterceptor {
  return onKey(apiKey, async (request) => {
    await sleep(delayMs);
    return request.handle();
  });
}
