// Broker-wide and per-listener connection creation rates (KIP-612): `max.connection.creation.rate` (new
// connections per second on all listeners but the inter-broker one) and
// `listener.name.<listener>.max.connection.creation.rate` (on that listener, the inter-broker one included).
//
// As Kafka's ConnectionQuotas: each accepted connection is recorded (1) in the broker's rate unless its listener
// is the inter-broker one (protected, when there are several listeners), and in its listener's rate when that
// listener has a quota; the throttle time is the larger of the two excesses, (O - B) / B x W, bounded by one
// window (QuotaUtils.boundedThrottleTime). Unlike the IP quota, which closes a throttled connection, Kafka blocks
// the listener's acceptor for that time: the connection, and the ones behind it, are served late, not refused.
// The socket server does the waiting (socket-server.ts); this class only measures. Both keys are dynamic
// (cluster-wide or per broker), so configure() runs again when the broker config changes.

import { type RateWindow, throttleTimeMs, WindowedRate } from './rate.js';

export const CONNECTION_CREATION_RATE_KEY = 'max.connection.creation.rate';
/** Kafka's default, Int.MaxValue, means no quota. */
const INT32_MAX = 0x7fffffff;
const LISTENER_KEY = /^listener\.name\.([^.]+)\.max\.connection\.creation\.rate$/;

interface Quota {
  bound: number;
  readonly rate: WindowedRate;
}

export class ConnectionCreationRates {
  private broker: Quota | null = null;
  private readonly listeners = new Map<string, Quota>();

  constructor(
    private readonly window: RateWindow,
    /** The inter-broker listener, exempt from the broker-wide rate; null when it is the only listener. */
    private protectedListener: string | null,
  ) {}

  /**
   * The listener exempt from the broker-wide rate after a dynamic listener change: the inter-broker one once the
   * broker has more than one listener, none while it is the only one (Kafka's ConnectionQuotas.protectedListener
   * reads the current listeners the same way).
   */
  protect(listenerName: string | null): void {
    this.protectedListener = listenerName;
  }

  /** The listener exempt from broker-wide connection bounds now (also from max.connections, in Kafka). */
  get protectedListenerName(): string | null {
    return this.protectedListener;
  }

  /** Reads the rates from broker config entries (static and dynamic merged); INT32_MAX or unset means none. */
  configure(entries: Iterable<[string, string]>): void {
    let brokerBound: number | null = null;
    const listenerBounds = new Map<string, number>();
    for (const [name, text] of entries) {
      const bound = Number(text);
      if (!Number.isInteger(bound) || bound < 0 || bound >= INT32_MAX) continue;
      if (name === CONNECTION_CREATION_RATE_KEY) brokerBound = bound;
      const match = LISTENER_KEY.exec(name);
      if (match !== null) listenerBounds.set((match[1] as string).toUpperCase(), bound);
    }
    this.broker = this.quota(this.broker, brokerBound);
    for (const name of new Set([...this.listeners.keys(), ...listenerBounds.keys()])) {
      const next = this.quota(this.listeners.get(name) ?? null, listenerBounds.get(name) ?? null);
      if (next === null) this.listeners.delete(name);
      else this.listeners.set(name, next);
    }
  }

  /** A changed bound keeps the rate measured so far, as Kafka updates a sensor's quota in place. */
  private quota(current: Quota | null, bound: number | null): Quota | null {
    if (bound === null) return null;
    if (current !== null) {
      current.bound = bound;
      return current;
    }
    return { bound, rate: new WindowedRate(this.window) };
  }

  /** Records a new connection on `listenerName` at `nowMs`; answers how long its acceptor must wait (ms). */
  throttleMs(listenerName: string, nowMs: number): number {
    let throttle = 0;
    if (this.broker !== null && listenerName !== this.protectedListener) {
      throttle = this.record(this.broker, nowMs);
    }
    const listener = this.listeners.get(listenerName);
    if (listener !== undefined) throttle = Math.max(throttle, this.record(listener, nowMs));
    return throttle;
  }

  private record(quota: Quota, nowMs: number): number {
    quota.rate.record(1, nowMs);
    const observed = quota.rate.measure(nowMs);
    if (observed <= quota.bound) return 0;
    // A bound of 0 lets nothing through: the longest wait, as Kafka's bounded throttle time.
    if (quota.bound === 0) return this.window.windowMs;
    const excess = throttleTimeMs(observed, quota.bound, quota.rate.windowSizeMs(nowMs));
    return Math.max(1, Math.min(excess, this.window.windowMs));
  }
}
