// Which known broker gets a request that any broker can answer (Metadata, the admin's any-broker calls), as
// Kafka's NetworkClient.leastLoadedNode chooses it, and the reconnect backoff that choice reads (Kafka's
// ClusterConnectionStates: reconnect.backoff.ms, doubled per failed attempt up to reconnect.backoff.max.ms, with
// 20 % jitter, reset by a connection that opens, started by any attempt that fails or connection that closes).
// Owned by one Cluster; plain data, no I/O.

import assert from 'node:assert/strict';

/** How one broker's connection stands, as the choice sees it. */
export type BrokerConnectionState =
  /** Open: `load` requests are in flight or queued on it, `throttled` while a broker quota's wait runs. */
  | { readonly kind: 'ready'; readonly load: number; readonly throttled: boolean }
  /** Being opened (TCP, TLS, ApiVersions, SASL). */
  | { readonly kind: 'connecting' }
  /** No connection: one may be opened unless the reconnect backoff of the last failed attempt still runs. */
  | { readonly kind: 'idle' };

/** Per broker, the failed connection attempts since the last that opened, and when the last one began. */
interface AttemptRecord {
  failures: number;
  lastAttemptMs: number;
  backoffUntilMs: number;
}

/** The reconnect backoff of each broker the client failed to connect to. */
export class ReconnectBackoff {
  private readonly attempts = new Map<number, AttemptRecord>();

  constructor(
    private readonly backoffMs: number,
    private readonly backoffMaxMs: number,
  ) {
    assert.ok(backoffMs >= 0 && backoffMaxMs >= 0, 'reconnect backoffs are not negative');
  }

  /** A connection attempt to `nodeId` began at `nowMs`. */
  attempted(nodeId: number, nowMs: number): void {
    const record = this.attempts.get(nodeId) ?? { failures: 0, lastAttemptMs: 0, backoffUntilMs: 0 };
    record.lastAttemptMs = nowMs;
    this.attempts.set(nodeId, record);
  }

  /**
   * The attempt to `nodeId` failed, or its open connection closed, at `nowMs`: no new attempt before the backoff,
   * which grows with each failure since the last connection that opened (Kafka's ClusterConnectionStates.disconnected
   * starts it for any disconnect).
   */
  failed(nodeId: number, nowMs: number): void {
    const record = this.attempts.get(nodeId) ?? { failures: 0, lastAttemptMs: nowMs, backoffUntilMs: 0 };
    const base = Math.min(this.backoffMaxMs, this.backoffMs * 2 ** record.failures);
    record.failures++;
    record.backoffUntilMs = nowMs + base * (0.8 + Math.random() * 0.4);
    this.attempts.set(nodeId, record);
  }

  /** The attempt to `nodeId` opened a connection: the next failure starts from reconnect.backoff.ms again. */
  connected(nodeId: number): void {
    this.attempts.delete(nodeId);
  }

  canConnect(nodeId: number, nowMs: number): boolean {
    return this.waitMs(nodeId, nowMs) === 0;
  }

  /** How long from `nowMs` until a connection to `nodeId` may be attempted: 0 when it may be now. */
  waitMs(nodeId: number, nowMs: number): number {
    return Math.max(0, (this.attempts.get(nodeId)?.backoffUntilMs ?? 0) - nowMs);
  }

  /** When the last attempt to `nodeId` began, 0 if never. */
  lastAttemptMs(nodeId: number): number {
    return this.attempts.get(nodeId)?.lastAttemptMs ?? 0;
  }
}

/**
 * The broker for an any-broker request, or null when none is usable. Walking the brokers from a random one, as
 * Kafka's leastLoadedNode does: the first open connection with nothing in flight wins at once; else the open one
 * with the fewest requests; else one being connected (its connection comes sooner than a new one); else the broker
 * out of reconnect backoff tried longest ago. A connection held by a quota's throttle is not ready (Kafka's
 * ClusterConnectionStates.isReady), and a broker still in backoff is skipped.
 */
export function leastLoadedBroker(
  nodeIds: readonly number[],
  stateOf: (nodeId: number) => BrokerConnectionState,
  backoff: ReconnectBackoff,
  nowMs: number,
): number | null {
  let readyId: number | null = null;
  let readyLoad = Number.POSITIVE_INFINITY;
  let connectingId: number | null = null;
  let canConnectId: number | null = null;
  const offset = Math.floor(Math.random() * nodeIds.length);
  for (let i = 0; i < nodeIds.length; i++) {
    const id = nodeIds[(offset + i) % nodeIds.length]!;
    const state = stateOf(id);
    if (state.kind === 'ready' && !state.throttled) {
      if (state.load === 0) return id;
      if (state.load < readyLoad) {
        readyLoad = state.load;
        readyId = id;
      }
    } else if (state.kind === 'connecting') {
      connectingId = id;
    } else if (state.kind === 'idle' && backoff.canConnect(id, nowMs)) {
      if (canConnectId === null || backoff.lastAttemptMs(canConnectId) > backoff.lastAttemptMs(id)) {
        canConnectId = id;
      }
    }
  }
  return readyId ?? connectingId ?? canConnectId;
}
