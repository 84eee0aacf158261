// Delegation tokens (KIP-48) on one broker, as Kafka's DelegationTokenManager in ZooKeeper mode: creating,
// renewing, expiring and describing tokens with Kafka's rules and error codes, a copy of every token in memory
// (kept current by the change notifications all brokers watch, token-store.ts), the SCRAM credentials a token
// authenticates with, and the periodic removal of expired tokens.
//
// Lifecycle: start() creates the paths, reads the notifications (setting the watch) and then every token, so a
// change landing meanwhile is read again when its notification fires; it is called again after a ZooKeeper
// session was renewed. stop() stops following and the expiry timer. Without delegation.token.secret.key (or its
// older name delegation.token.master.key) tokens are disabled: nothing is read, every request is answered
// DELEGATION_TOKEN_AUTH_DISABLED.
//
// Writes go one at a time (Kafka holds a lock around each), so a renewal cannot be lost behind another on this
// broker; across brokers the last write wins, as in Kafka.

import { randomBytes } from 'node:crypto';
import type { BrokerConfig } from '../../broker/config/broker-config.js';
import type { Logger } from '../../common/logger.js';
import type { CoordinationStore } from '../../controller/store/store.js';
import { ErrorCode } from '../../protocol/errors.js';
import {
  credentialFromSalted,
  SCRAM_ITERATIONS_MIN,
  type ScramCredential,
  type ScramMechanism,
  saltedPassword,
} from '../sasl/scram-credential.js';
import { newTokenId, type TokenInformation, tokenHmac } from './token-info.js';
import { changeSequence, TOKEN_CHANGE_EXPIRATION_MS, TokenStore } from './token-store.js';

export interface DelegationTokenSettings {
  /** delegation.token.secret.key (or delegation.token.master.key); null or empty: tokens are disabled. */
  readonly secretKey: string | null;
  /** delegation.token.max.lifetime.ms. */
  readonly maxLifetimeMs: number;
  /** delegation.token.expiry.time.ms: the validity before a renewal is needed. */
  readonly expiryTimeMs: number;
  /** delegation.token.expiry.check.interval.ms. */
  readonly expiryCheckIntervalMs: number;
}

/** The settings from the broker config; delegation.token.master.key is read when the newer name is unset. */
export function delegationTokenSettings(config: BrokerConfig): DelegationTokenSettings {
  const v = config.values;
  const secret = v.password('delegation.token.secret.key') ?? v.password('delegation.token.master.key');
  return {
    secretKey: secret?.value ?? null,
    maxLifetimeMs: v.long('delegation.token.max.lifetime.ms'),
    expiryTimeMs: v.long('delegation.token.expiry.time.ms'),
    expiryCheckIntervalMs: v.long('delegation.token.expiry.check.interval.ms'),
  };
}

export interface CreatedToken {
  readonly errorCode: number;
  readonly token: TokenInformation | null;
  readonly hmac: Buffer;
}

export interface ExpiryResult {
  readonly errorCode: number;
  /** The token's expiry after the change; -1 on an error, as Kafka answers. */
  readonly expiryTimestampMs: number;
}

/** What a SCRAM exchange with `tokenauth=true` needs to know of a token. */
export interface TokenCredential {
  readonly owner: string;
  readonly expiryTimestampMs: number;
  readonly credential: ScramCredential;
}

export class DelegationTokenManager {
  private readonly tokens = new Map<string, TokenInformation>();
  /** Base64 HMAC to token id: Renew and Expire name a token by its HMAC. */
  private readonly byHmac = new Map<string, string>();
  /** SCRAM credentials derived from a token's HMAC, made on first use (as Kafka, 4096 iterations, any salt). */
  private readonly credentials = new Map<string, ScramCredential>();
  private readonly store: TokenStore;
  private lastSeen: number | undefined;
  private stopped = false;
  private changes: Promise<void> = Promise.resolve();
  private writes: Promise<unknown> = Promise.resolve();
  private expiryTimer: NodeJS.Timeout | null = null;

  constructor(
    store: CoordinationStore,
    private readonly settings: DelegationTokenSettings,
    private readonly logger: Logger,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.store = new TokenStore(store);
  }

  /** Kafka's tokenAuthEnabled: a non-empty secret key. */
  get enabled(): boolean {
    return this.settings.secretKey !== null && this.settings.secretKey !== '';
  }

  async start(): Promise<void> {
    if (!this.enabled) return;
    this.stopped = false;
    await this.store.ensurePaths();
    this.lastSeen = undefined;
    await this.processChanges();
    this.tokens.clear();
    this.byHmac.clear();
    this.credentials.clear();
    for (const token of await this.store.readAll()) this.cache(token);
    this.logger.info(`loaded ${this.tokens.size} delegation tokens`);
    if (this.expiryTimer === null) {
      this.expiryTimer = setInterval(() => {
        this.removeExpired().catch((err: unknown) =>
          this.logger.warn(`removing expired delegation tokens: ${String(err)}`),
        );
      }, this.settings.expiryCheckIntervalMs);
      this.expiryTimer.unref();
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.expiryTimer !== null) clearInterval(this.expiryTimer);
    this.expiryTimer = null;
  }

  private hmacOf(tokenId: string): Buffer {
    return tokenHmac(tokenId, this.settings.secretKey as string);
  }

  private cache(token: TokenInformation): void {
    if (!this.tokens.has(token.tokenId)) {
      this.byHmac.set(this.hmacOf(token.tokenId).toString('base64'), token.tokenId);
    }
    this.tokens.set(token.tokenId, token);
  }

  private uncache(tokenId: string): void {
    if (!this.tokens.delete(tokenId)) return;
    this.byHmac.delete(this.hmacOf(tokenId).toString('base64'));
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'])
      this.credentials.delete(`${tokenId}\0${mechanism}`);
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.writes.then(work, work);
    this.writes = next.catch(() => undefined);
    return next;
  }

  /** Kafka's createToken; the caller has checked the connection and the authorization. */
  create(
    owner: string,
    tokenRequester: string,
    renewers: readonly string[],
    maxLifetimeMs: number,
  ): Promise<CreatedToken> {
    if (!this.enabled) {
      return Promise.resolve({
        errorCode: ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED,
        token: null,
        hmac: Buffer.alloc(0),
      });
    }
    return this.serially(async () => {
      const issueTimestampMs = this.nowMs();
      const lifetimeMs =
        maxLifetimeMs <= 0
          ? this.settings.maxLifetimeMs
          : Math.min(maxLifetimeMs, this.settings.maxLifetimeMs);
      const maxTimestampMs = issueTimestampMs + lifetimeMs;
      const token: TokenInformation = {
        tokenId: newTokenId(),
        owner,
        tokenRequester,
        renewers: [...renewers],
        issueTimestampMs,
        maxTimestampMs,
        expiryTimestampMs: Math.min(maxTimestampMs, issueTimestampMs + this.settings.expiryTimeMs),
      };
      await this.store.write(token);
      this.cache(token);
      this.logger.info(`Created a delegation token: ${token.tokenId} for owner: ${owner}`);
      return { errorCode: ErrorCode.NONE, token, hmac: this.hmacOf(token.tokenId) };
    });
  }

  /** Kafka's renewToken: a negative period means delegation.token.expiry.time.ms. */
  renew(principal: string, hmac: Buffer, renewPeriodMs: number): Promise<ExpiryResult> {
    return this.changeExpiry(principal, hmac, (token, nowMs) => {
      if (token.maxTimestampMs < nowMs || token.expiryTimestampMs < nowMs) return 'expired';
      const periodMs = renewPeriodMs < 0 ? this.settings.expiryTimeMs : renewPeriodMs;
      return Math.min(token.maxTimestampMs, nowMs + periodMs);
    });
  }

  /** Kafka's expireToken: a negative period removes the token at once. */
  expire(principal: string, hmac: Buffer, expiryPeriodMs: number): Promise<ExpiryResult> {
    return this.changeExpiry(principal, hmac, (token, nowMs) => {
      if (expiryPeriodMs < 0) return 'remove';
      if (token.maxTimestampMs < nowMs || token.expiryTimestampMs < nowMs) return 'expired';
      return Math.min(token.maxTimestampMs, nowMs + expiryPeriodMs);
    });
  }

  private changeExpiry(
    principal: string,
    hmac: Buffer,
    decide: (token: TokenInformation, nowMs: number) => number | 'expired' | 'remove',
  ): Promise<ExpiryResult> {
    const failed = (errorCode: number): ExpiryResult => ({ errorCode, expiryTimestampMs: -1 });
    if (!this.enabled) return Promise.resolve(failed(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED));
    return this.serially(async () => {
      const tokenId = this.byHmac.get(hmac.toString('base64'));
      const token = tokenId === undefined ? undefined : this.tokens.get(tokenId);
      if (token === undefined) return failed(ErrorCode.DELEGATION_TOKEN_NOT_FOUND);
      if (token.owner !== principal && !token.renewers.includes(principal)) {
        return failed(ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH);
      }
      const nowMs = this.nowMs();
      const decision = decide(token, nowMs);
      if (decision === 'expired') return failed(ErrorCode.DELEGATION_TOKEN_EXPIRED);
      if (decision === 'remove') {
        await this.store.remove(token.tokenId);
        this.uncache(token.tokenId);
        this.logger.info(`Token expired for token: ${token.tokenId} for owner: ${token.owner}`);
        return { errorCode: ErrorCode.NONE, expiryTimestampMs: nowMs };
      }
      const changed: TokenInformation = { ...token, expiryTimestampMs: decision };
      await this.store.write(changed);
      this.cache(changed);
      this.logger.info(`Updated expiry time for token: ${token.tokenId} for owner: ${token.owner}`);
      return { errorCode: ErrorCode.NONE, expiryTimestampMs: decision };
    });
  }

  /** Every token `eligible` keeps, with its HMAC (DescribeDelegationToken). */
  describe(eligible: (token: TokenInformation) => boolean): { token: TokenInformation; hmac: Buffer }[] {
    const out: { token: TokenInformation; hmac: Buffer }[] = [];
    for (const token of this.tokens.values()) {
      if (eligible(token)) out.push({ token, hmac: this.hmacOf(token.tokenId) });
    }
    return out;
  }

  /**
   * The credential a SCRAM exchange with tokenauth=true checks: the token's HMAC in base64 is the password, the
   * token id the user name. Null for an unknown or expired token, which then fails like a wrong password.
   */
  tokenCredential(tokenId: string, mechanism: ScramMechanism): TokenCredential | null {
    if (!this.enabled) return null;
    const token = this.tokens.get(tokenId);
    if (token === undefined) return null;
    const nowMs = this.nowMs();
    if (token.expiryTimestampMs < nowMs || token.maxTimestampMs < nowMs) return null;
    const key = `${tokenId}\0${mechanism}`;
    let credential = this.credentials.get(key);
    if (credential === undefined) {
      const salt = randomBytes(16);
      const password = this.hmacOf(tokenId).toString('base64');
      const salted = saltedPassword(mechanism, password, salt, SCRAM_ITERATIONS_MIN);
      credential = credentialFromSalted(mechanism, salt, salted, SCRAM_ITERATIONS_MIN);
      this.credentials.set(key, credential);
    }
    return { owner: token.owner, expiryTimestampMs: token.expiryTimestampMs, credential };
  }

  /** Kafka's expireTokens: every token past its expiry or its maximum lifetime is deleted. */
  async removeExpired(): Promise<void> {
    if (!this.enabled || this.stopped) return;
    const nowMs = this.nowMs();
    for (const token of [...this.tokens.values()]) {
      if (token.expiryTimestampMs >= nowMs && token.maxTimestampMs >= nowMs) continue;
      await this.serially(async () => {
        // Another broker may have renewed it meanwhile; the notification has then updated the copy here.
        const current = this.tokens.get(token.tokenId);
        if (
          current === undefined ||
          (current.expiryTimestampMs >= nowMs && current.maxTimestampMs >= nowMs)
        ) {
          return;
        }
        await this.store.remove(token.tokenId);
        this.uncache(token.tokenId);
        this.logger.info(`Delegation token expired for token: ${token.tokenId} for owner: ${token.owner}`);
      });
    }
  }

  private async processChanges(): Promise<void> {
    if (this.stopped) return;
    const names = await this.store.changeNames(() => {
      this.changes = this.changes
        .then(() => this.processChanges())
        .catch((err: unknown) => this.logger.error(`delegation token change notifications: ${String(err)}`));
    });
    if (names === null) return;
    const fresh = names
      .map((name) => ({ name, seq: changeSequence(name) }))
      .filter((c) => c.seq >= 0 && (this.lastSeen === undefined || c.seq > this.lastSeen))
      .sort((a, b) => a.seq - b.seq);
    // On start every token is read next: older notifications are history.
    if (this.lastSeen === undefined) {
      this.lastSeen = fresh.length === 0 ? -1 : fresh[fresh.length - 1]!.seq;
      return;
    }
    for (const change of fresh) {
      this.lastSeen = change.seq;
      const read = await this.store.readChange(change.name, this.nowMs());
      if (read === null) continue;
      const token = await this.store.read(read.tokenId);
      if (token === null) this.uncache(read.tokenId);
      else this.cache(token);
      if (read.ageMs > TOKEN_CHANGE_EXPIRATION_MS) await this.store.deleteChange(change.name);
    }
  }
}
