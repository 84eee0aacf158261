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
import { javaDouble, javaLong } from './java-numbers.js';
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

  /** The kinds in the order Kafka's QuotaConfigHandler updates them, each with its key and how Kafka reads it. */
  private managers(): [ClientQuotaManager, string, (text: string) => number | null][] {
    return [
      [this.produce, KEY_OF_KIND.produce, javaLong],
      [this.fetch, KEY_OF_KIND.fetch, javaLong],
      [this.request, KEY_OF_KIND.request, javaDouble],
      [this.controllerMutation, KEY_OF_KIND['controller-mutation'], javaDouble],
    ];
  }

  /**
   * Applies an entity's configs as Kafka's QuotaConfigHandler.updateQuotaConfig does: kind by kind in its order,
   * each key present set, each absent one removed. A value Kafka cannot read (its toLong or toDouble throws, and
   * the exception ends the update of the entity) stops here too: the kinds before it have their new quota, that
   * kind and those after it keep the one they had. Brook also stops at a negative or NaN bound, which Kafka would
   * set and no rate can be held to.
   */
  apply(entity: QuotaEntity, configs: ReadonlyMap<string, string>): void {
    for (const [manager, key, parse] of this.managers()) {
      const text = configs.get(key);
      const bound = text === undefined ? null : parse(text);
      if (text !== undefined && (bound === null || !(bound >= 0))) {
        this.logger.warn(
          `ignoring the change of ${describeEntity(entity)} from ${key}=${text} on: not a number` +
            ' (the quotas from there keep their value)',
        );
        break;
      }
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
    if (this.managers().some(([manager]) => manager.quotaOf(entity) !== undefined)) this.known.set(k, entity);
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
