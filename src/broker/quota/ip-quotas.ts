// IP connection-rate quotas (KIP-612): `connection_creation_rate` of `/config/ips/<address>` and
// `/config/ips/<default>`, new connections per second from one address, enforced when a connection is accepted.
//
// As Kafka's ConnectionQuotas: the address's own quota wins over the default; with neither nothing is recorded.
// Each accepted connection is recorded (1) in the address's rate over quota.window.num x quota.window.size.seconds;
// when the rate is then above the quota, the connection is throttled for (O - B) / B x W, at most one window
// (QuotaUtils.boundedThrottleTime with the window size as the bound), and the socket server closes it after that
// time without reading from it (Kafka's delayed close of throttled sockets), so a client reconnecting in a loop is
// slowed down rather than served. Rates of addresses not seen for the whole window are dropped.

import type { Logger } from '../../common/logger.js';
import type { ConfigEntityListener } from '../dynamic-config.js';
import type { ClientQuotaStore } from './client-quota-store.js';
import { javaInt } from './java-numbers.js';
import { IP_CONNECTION_RATE_KEY, parseEntityConfigPath, type QuotaEntity } from './quota-entity.js';
import { type RateWindow, throttleTimeMs, WindowedRate } from './rate.js';

interface AddressRate {
  readonly rate: WindowedRate;
  lastMs: number;
}

export class IpConnectionQuotas implements ConfigEntityListener {
  readonly entityTypes = ['ips'];
  /** connection_creation_rate by address; the default entity under null. */
  private readonly bounds = new Map<string | null, number>();
  private readonly rates = new Map<string, AddressRate>();
  private recordsSinceSweep = 0;

  constructor(
    private readonly store: ClientQuotaStore,
    private readonly window: RateWindow,
    private readonly logger: Logger,
  ) {}

  /** The quota that applies to `address`, or null when none does. */
  quotaOf(address: string): number | null {
    return this.bounds.get(address) ?? this.bounds.get(null) ?? null;
  }

  /**
   * Records a new connection from `address` at `nowMs`; answers how long to hold it before closing it (ms), or 0
   * when it may be served.
   */
  throttleMs(remoteAddress: string, nowMs: number): number {
    if (this.bounds.size === 0) return 0;
    // An IPv4 client of a dual-stack socket shows as ::ffff:a.b.c.d; its quota is the IPv4 address's.
    const address =
      remoteAddress.startsWith('::ffff:') && remoteAddress.includes('.')
        ? remoteAddress.slice(7)
        : remoteAddress;
    const bound = this.quotaOf(address);
    if (bound === null) return 0;
    let entry = this.rates.get(address);
    if (entry === undefined) {
      entry = { rate: new WindowedRate(this.window), lastMs: nowMs };
      this.rates.set(address, entry);
    }
    entry.lastMs = nowMs;
    entry.rate.record(1, nowMs);
    if (++this.recordsSinceSweep >= 1000) this.sweep(nowMs);
    const observed = entry.rate.measure(nowMs);
    if (observed <= bound) return 0;
    const throttle = throttleTimeMs(observed, bound, entry.rate.windowSizeMs(nowMs));
    // Kafka's recordIpConnectionMaybeThrottle takes a refused connection back out: only accepted ones count, so a
    // client that retries faster than its rate is still let through at the rate.
    entry.rate.record(-1, nowMs);
    return Math.max(1, Math.min(throttle, this.window.windowMs));
  }

  private sweep(nowMs: number): void {
    this.recordsSinceSweep = 0;
    const keepMs = this.window.samples * this.window.windowMs;
    for (const [address, entry] of this.rates) if (nowMs - entry.lastMs > keepMs) this.rates.delete(address);
  }

  apply(entity: QuotaEntity, configs: ReadonlyMap<string, string>): void {
    if (entity.ip === undefined) return;
    const text = configs.get(IP_CONNECTION_RATE_KEY);
    // Kafka's IpConfigHandler reads it with toInt (Integer.parseInt): "5.0", " 5" and "1e3" are no rate.
    const bound = text === undefined ? null : javaInt(text);
    const name = entity.ip ?? '<default>';
    if (text !== undefined && !(bound !== null && bound > 0)) {
      this.logger.warn(`ignoring ${IP_CONNECTION_RATE_KEY}=${text} of ip ${name}: not a positive integer`);
      return;
    }
    const had = this.bounds.get(entity.ip);
    if (bound === null) this.bounds.delete(entity.ip);
    else this.bounds.set(entity.ip, bound);
    if (had !== (bound ?? undefined)) {
      this.logger.info(
        bound === null
          ? `removed ${IP_CONNECTION_RATE_KEY} of ip ${name}`
          : `${IP_CONNECTION_RATE_KEY} of ip ${name} is ${bound}`,
      );
    }
  }

  async reloadAll(): Promise<boolean> {
    const seen = new Set<string | null>();
    const ips = await this.store.ips();
    if (ips === null) {
      this.logger.warn(
        'reading the IP connection rate quotas failed: keeping the current ones, trying again',
      );
      return false;
    }
    for (const { entity, configs } of ips.read) {
      seen.add(entity.ip ?? null);
      this.apply(entity, configs);
    }
    // A refused document keeps that address's quota as it is, and the others apply (see ClientQuotas.reloadAll).
    for (const entity of ips.refused) seen.add(entity.ip ?? null);
    for (const ip of [...this.bounds.keys()]) {
      if (!seen.has(ip)) this.apply({ user: undefined, clientId: undefined, ip }, new Map());
    }
    return true;
  }

  async changed(entityPath: string): Promise<boolean> {
    const entity = parseEntityConfigPath(entityPath);
    if (entity === null || entity.ip === undefined) return true;
    const read = await this.store.readForChange(entity);
    if (!read.ok) return !read.retry;
    this.apply(entity, read.configs);
    return true;
  }
}
