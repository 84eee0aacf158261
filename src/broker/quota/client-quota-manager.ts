// One kind of client quota (produce bytes, fetch bytes, request time, controller mutations) as Kafka's
// ClientQuotaManager keeps it: the quotas set for entities, the precedence that picks one for a (user, client id),
// and a sensor per quota in use that records what clients do and says how long to throttle them.
//
// Precedence (Kafka's DefaultQuotaCallback), most specific first:
//   1 /config/users/<user>/clients/<client-id>      5 /config/users/<default>/clients/<default>
//   2 /config/users/<user>/clients/<default>        6 /config/users/<default>
//   3 /config/users/<user>                          7 /config/clients/<client-id>
//   4 /config/users/<default>/clients/<client-id>   8 /config/clients/<default>
// Clients sharing the quota that applies share its sensor: a user quota is one budget for all of that user's
// client ids, a client-id quota one budget for all users of that client id (Kafka's metric tags).
//
// Nothing is recorded until some quota of this kind has been set (Kafka's quotasEnabled); from then on every client
// is measured, as in Kafka, until the broker restarts.

import { entityKey, type QuotaEntity } from './quota-entity.js';
import { type RateWindow, TokenBucket, throttleTimeMs, WindowedRate } from './rate.js';

const USER_ENABLED = 2;
const CLIENT_ID_ENABLED = 1;
const USER_CLIENT_ID_ENABLED = 4;
/** Sensors of clients idle this long are dropped (Kafka's InactiveSensorExpirationTimeSeconds). */
const SENSOR_IDLE_MS = 3_600_000;
/** How often at most idle sensors are looked for. */
const SENSOR_SWEEP_INTERVAL_MS = 60_000;

interface Sensor {
  readonly userTag: string;
  readonly clientTag: string;
  /** The bound of the quota that applies to these tags; Infinity when none does. */
  bound: number;
  readonly rate: WindowedRate;
  /** Only for controller mutations. */
  readonly bucket: TokenBucket | null;
  lastRecordMs: number;
}

export type QuotaKind = 'produce' | 'fetch' | 'request' | 'controller-mutation';

export class ClientQuotaManager {
  private readonly quotas = new Map<string, number>();
  private enabled = 0;
  private readonly sensors = new Map<string, Sensor>();
  private lastSweepMs = 0;

  constructor(
    readonly kind: QuotaKind,
    private window: RateWindow,
  ) {}

  get quotasEnabled(): boolean {
    return this.enabled !== 0;
  }

  /**
   * Sets (a bound) or removes (null) the quota of an entity. `user` is the user's name (not sanitized); null
   * parts are default entities.
   */
  update(entity: QuotaEntity, bound: number | null): void {
    const { user, clientId } = entity;
    if (user !== undefined) this.enabled |= clientId !== undefined ? USER_CLIENT_ID_ENABLED : USER_ENABLED;
    else if (clientId !== undefined) this.enabled |= CLIENT_ID_ENABLED;
    const key = entityKey(user, clientId);
    if (bound === null) this.quotas.delete(key);
    else this.quotas.set(key, bound);
    // Which quota applies, and with it the tags of a client, may have changed for any sensor.
    for (const s of this.sensors.values()) s.bound = this.quotaLimit(s.userTag, s.clientTag);
  }

  /** The bound an entity has itself (not through precedence), or undefined. */
  quotaOf(entity: QuotaEntity): number | undefined {
    return this.quotas.get(entityKey(entity.user, entity.clientId));
  }

  /** The quota that applies to a user (name) and client id, Infinity when none does. */
  quotaFor(user: string, clientId: string): number {
    const [u, c] = this.metricTags(user, clientId);
    return this.quotaLimit(u, c);
  }

  /**
   * Records `value` for a client and answers the throttle time in ms (0 within quota): Kafka's
   * recordAndGetThrottleTimeMs, the value counted whether or not it exceeds the quota.
   */
  recordAndGetThrottleTimeMs(user: string, clientId: string, value: number, nowMs: number): number {
    if (!this.quotasEnabled) return 0;
    const s = this.sensor(user, clientId, nowMs);
    s.rate.record(value, nowMs);
    s.lastRecordMs = nowMs;
    if (s.bound === Number.POSITIVE_INFINITY) return 0;
    const observed = s.rate.measure(nowMs);
    if (observed <= s.bound) return 0;
    return throttleTimeMs(observed, s.bound, s.rate.windowSizeMs(nowMs));
  }

  /** Records without checking (Kafka's recordNoThrottle), or takes back a throttled fetch's bytes (negative). */
  recordNoThrottle(user: string, clientId: string, value: number, nowMs: number): void {
    if (!this.quotasEnabled) return;
    this.sensor(user, clientId, nowMs).rate.record(value, nowMs);
  }

  /**
   * The most a client may take at once without being throttled for it alone (Kafka's getMaxValueInQuotaWindow:
   * quota x (samples - 1) x window); a fetch asks for no more than this.
   */
  maxValueInQuotaWindow(user: string, clientId: string): number {
    if (!this.quotasEnabled) return Number.POSITIVE_INFINITY;
    const bound = this.quotaFor(user, clientId);
    return (bound * (this.window.samples - 1) * this.window.windowMs) / 1000;
  }

  /**
   * Controller mutations (KIP-599): takes `permits` tokens. Strict (new request versions): refused, with the
   * throttle time, when the bucket is already empty; permissive (old versions): always taken, the throttle time
   * says how long the client should wait. Returns [accepted, throttle time in ms].
   */
  recordMutation(
    user: string,
    clientId: string,
    permits: number,
    strict: boolean,
    nowMs: number,
  ): { accepted: boolean; throttleTimeMs: number } {
    if (!this.quotasEnabled) return { accepted: true, throttleTimeMs: 0 };
    const s = this.sensor(user, clientId, nowMs);
    s.lastRecordMs = nowMs;
    s.rate.record(permits, nowMs);
    const bucket = s.bucket!;
    if (s.bound === Number.POSITIVE_INFINITY) return { accepted: true, throttleTimeMs: 0 };
    const before = bucket.measure(s.bound, nowMs);
    if (strict && before < 0) return { accepted: false, throttleTimeMs: bucketThrottleMs(before, s.bound) };
    bucket.record(s.bound, permits, nowMs);
    const after = bucket.measure(s.bound, nowMs);
    return { accepted: true, throttleTimeMs: after < 0 ? bucketThrottleMs(after, s.bound) : 0 };
  }

  /** The current throttle time of a client's mutation bucket (0 when it holds tokens). */
  mutationThrottleTimeMs(user: string, clientId: string, nowMs: number): number {
    if (!this.quotasEnabled) return 0;
    const s = this.sensor(user, clientId, nowMs);
    if (s.bound === Number.POSITIVE_INFINITY) return 0;
    const tokens = s.bucket!.measure(s.bound, nowMs);
    return tokens < 0 ? bucketThrottleMs(tokens, s.bound) : 0;
  }

  setWindow(window: RateWindow): void {
    this.window = window;
    for (const s of this.sensors.values()) {
      s.rate.setWindow(window);
      s.bucket?.setWindow(window);
    }
  }

  private sensor(user: string, clientId: string, nowMs: number): Sensor {
    const [userTag, clientTag] = this.metricTags(user, clientId);
    const key = `${userTag}\u0001${clientTag}`;
    let s = this.sensors.get(key);
    if (s === undefined) {
      this.sweep(nowMs);
      s = {
        userTag,
        clientTag,
        bound: this.quotaLimit(userTag, clientTag),
        rate: new WindowedRate(this.window),
        bucket: this.kind === 'controller-mutation' ? new TokenBucket(this.window) : null,
        lastRecordMs: nowMs,
      };
      this.sensors.set(key, s);
    }
    return s;
  }

  private sweep(nowMs: number): void {
    if (nowMs - this.lastSweepMs < SENSOR_SWEEP_INTERVAL_MS) return;
    this.lastSweepMs = nowMs;
    for (const [key, s] of this.sensors)
      if (nowMs - s.lastRecordMs > SENSOR_IDLE_MS) this.sensors.delete(key);
  }

  private has(user: string | null | undefined, clientId: string | null | undefined): boolean {
    return this.quotas.has(entityKey(user, clientId));
  }

  /** Kafka's DefaultQuotaCallback.quotaMetricTags: which (user, client id) the quota that applies is kept for. */
  private metricTags(user: string, clientId: string): [string, string] {
    switch (this.enabled) {
      case 0:
      case CLIENT_ID_ENABLED:
        return ['', clientId];
      case USER_ENABLED:
        return [user, ''];
      case USER_CLIENT_ID_ENABLED:
        return [user, clientId];
    }
    if (this.has(user, clientId) || this.has(user, null)) return [user, clientId];
    if (this.has(user, undefined)) return [user, ''];
    if (this.has(null, clientId) || this.has(null, null)) return [user, clientId];
    if (this.has(null, undefined)) return [user, ''];
    return ['', clientId];
  }

  /** Kafka's DefaultQuotaCallback.quotaLimit for a sensor's tags; Infinity when no quota applies. */
  private quotaLimit(userTag: string, clientTag: string): number {
    const q = (u: string | null | undefined, c: string | null | undefined) =>
      this.quotas.get(entityKey(u, c));
    let bound: number | undefined;
    if (userTag !== '' && clientTag !== '') {
      bound = q(userTag, clientTag) ?? q(userTag, null) ?? q(null, clientTag) ?? q(null, null);
    } else if (userTag !== '') {
      bound = q(userTag, undefined) ?? q(null, undefined);
    } else if (clientTag !== '') {
      bound = q(undefined, clientTag) ?? q(undefined, null);
    }
    return bound ?? Number.POSITIVE_INFINITY;
  }
}

/** Kafka's ControllerMutationQuotaManager.throttleTimeMs: the time to refill a negative balance. */
function bucketThrottleMs(tokens: number, rate: number): number {
  return Math.round((-tokens / rate) * 1000);
}
