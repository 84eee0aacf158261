// The broker's client quotas: one ClientQuotaManager per kind, filled from the entities in the store and kept up
// to date by the config change notifications (DynamicConfig calls this as the owner of users/ and clients/).
//
// Windows: produce, fetch and request quotas over quota.window.num x quota.window.size.seconds; controller
// mutations over controller.quota.window.num x controller.quota.window.size.seconds (Kafka's keys and defaults).

import type { Logger } from '../../common/logger.js';
import type { BrokerConfig } from '../config/broker-config.js';
import type { ConfigEntityListener } from '../dynamic-config.js';
import { ClientQuotaManager } from './client-quota-manager.js';
import type { ClientQuotaStore } from './client-quota-store.js';
import { entityKey, parseEntityConfigPath, type QuotaEntity } from './quota-entity.js';
import type { RateWindow } from './rate.js';

const KEY_OF_KIND = {
  produce: 'producer_byte_rate',
  fetch: 'consumer_byte_rate',
  request: 'request_percentage',
  'controller-mutation': 'controller_mutation_rate',
} as const;

export class ClientQuotas implements ConfigEntityListener {
  readonly entityTypes = ['users', 'clients'];
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  readonly request: ClientQuotaManager;
  readonly controllerMutation: ClientQuotaManager;
  /** The longest throttle the request quota gives: one window (Kafka's ClientRequestQuotaManager). */
  readonly requestThrottleMaxMs: number;
  /** Entities with quotas now, so that a reload can remove those that disappeared. */
  private readonly known = new Map<string, QuotaEntity>();

  constructor(
    readonly store: ClientQuotaStore,
    config: Pick<BrokerConfig, 'values'>,
    private readonly logger: Logger,
  ) {
    const v = config.values;
    const client: RateWindow = {
      samples: v.int('quota.window.num'),
      windowMs: v.int('quota.window.size.seconds') * 1000,
    };
    const controller: RateWindow = {
      samples: v.int('controller.quota.window.num'),
      windowMs: v.int('controller.quota.window.size.seconds') * 1000,
    };
    this.requestThrottleMaxMs = client.windowMs;
    this.produce = new ClientQuotaManager('produce', client);
    this.fetch = new ClientQuotaManager('fetch', client);
    this.request = new ClientQuotaManager('request', client);
    this.controllerMutation = new ClientQuotaManager('controller-mutation', controller);
  }

  private managers(): [ClientQuotaManager, string][] {
    return [
      [this.produce, KEY_OF_KIND.produce],
      [this.fetch, KEY_OF_KIND.fetch],
      [this.request, KEY_OF_KIND.request],
      [this.controllerMutation, KEY_OF_KIND['controller-mutation']],
    ];
  }

  /** Applies an entity's configs: each quota key present is set, each absent one removed. */
  apply(entity: QuotaEntity, configs: ReadonlyMap<string, string>): void {
    let any = false;
    for (const [manager, key] of this.managers()) {
      const text = configs.get(key);
      const bound = text === undefined ? null : Number(text);
      if (bound !== null && !(bound > 0 || bound === 0)) {
        this.logger.warn(`ignoring ${key}=${text} of ${describeEntity(entity)}: not a number`);
        continue;
      }
      if (bound !== null) any = true;
      // A quota of an entity that never had one is not news to this kind: do not enable its sensors.
      if (bound === null && manager.quotaOf(entity) === undefined) continue;
      manager.update(entity, bound);
      this.logger.info(
        bound === null
          ? `removed ${key} of ${describeEntity(entity)}`
          : `${key} of ${describeEntity(entity)} is ${bound}`,
      );
    }
    const k = entityKey(entity.user, entity.clientId);
    if (any) this.known.set(k, entity);
    else this.known.delete(k);
  }

  async reloadAll(): Promise<boolean> {
    const seen = new Set<string>();
    const all = await this.store.all();
    if (all === null) {
      this.logger.warn('reading the client quotas failed: keeping the current ones, trying again');
      return false;
    }
    for (const { entity, configs } of all.read) {
      if (entity.ip !== undefined) continue; // IP entities are IpConnectionQuotas' (ip-quotas.ts)
      seen.add(entityKey(entity.user, entity.clientId));
      this.apply(entity, configs);
    }
    // Each entity on its own, as Kafka applies each config change: a refused document (its error is in the log)
    // keeps that entity's quotas as they are, and neither stops the others nor makes the reload fail, which would
    // retry it forever while every other quota stayed unapplied.
    for (const entity of all.refused) {
      if (entity.ip === undefined) seen.add(entityKey(entity.user, entity.clientId));
    }
    for (const [k, entity] of [...this.known]) if (!seen.has(k)) this.apply(entity, new Map());
    return true;
  }

  async changed(entityPath: string): Promise<boolean> {
    const entity = parseEntityConfigPath(entityPath);
    if (entity === null) return true;
    const read = await this.store.readForChange(entity);
    if (!read.ok) return !read.retry;
    this.apply(entity, read.configs);
    return true;
  }
}

export function describeEntity(entity: QuotaEntity): string {
  const part = (name: string | null) => (name === null ? '<default>' : name);
  const parts: string[] = [];
  if (entity.user !== undefined) parts.push(`user ${part(entity.user)}`);
  if (entity.clientId !== undefined) parts.push(`client-id ${part(entity.clientId)}`);
  return parts.join(' ');
}
