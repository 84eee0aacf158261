// Client quota configs in the coordination store, in Kafka's layout (see quota-entity.ts). Writes go through
// DynamicConfig, which adds the /config/changes notification every broker watches; a user's document keeps its
// other keys (SCRAM credentials) as they are, since Kafka keeps both in one document.

import type { CoordinationStore } from '../../controller/store/store.js';
import { CONFIG_PATH } from '../../controller/zk-layout/index.js';
import type { DynamicConfig } from '../dynamic-config.js';
import { desanitizeEntityName, entityConfigPath, type QuotaEntity } from './quota-entity.js';

export interface EntityConfigs {
  readonly entity: QuotaEntity;
  readonly configs: Map<string, string>;
}

export class ClientQuotaStore {
  constructor(
    private readonly store: CoordinationStore,
    private readonly dynamicConfig: DynamicConfig,
  ) {}

  /** Every key the entity's document holds (quota keys and, for a user, SCRAM credentials). */
  read(entity: QuotaEntity): Promise<Map<string, string>> {
    return this.dynamicConfig.readEntity(`${CONFIG_PATH}/${entityConfigPath(entity)}`);
  }

  /** Replaces the entity's document and notifies every broker; false when the store refused the write. */
  async write(entity: QuotaEntity, configs: ReadonlyMap<string, string>): Promise<boolean> {
    const entityPath = entityConfigPath(entity);
    // ZooKeeper needs the parents of /config/users/<u>/clients/<c>; Kafka creates them empty as well.
    const segments = entityPath.split('/');
    for (let i = 1; i < segments.length; i++) {
      const parent = `${CONFIG_PATH}/${segments.slice(0, i).join('/')}`;
      const created = await this.store.create(parent, new Uint8Array(0));
      if (!created.ok && created.code !== 'NODEEXISTS') return false;
    }
    return this.dynamicConfig.writeEntityConfig(`${CONFIG_PATH}/${entityPath}`, entityPath, configs);
  }

  /** Every user, user and client id, client id and IP entity in the store, with its configs. */
  async all(): Promise<EntityConfigs[]> {
    const out: EntityConfigs[] = [];
    for (const u of await this.childrenOf(`${CONFIG_PATH}/users`)) {
      const user = desanitizeEntityName(u);
      out.push({
        entity: { user, clientId: undefined },
        configs: await this.read({ user, clientId: undefined }),
      });
      for (const c of await this.childrenOf(`${CONFIG_PATH}/users/${u}/clients`)) {
        const entity = { user, clientId: desanitizeEntityName(c) };
        out.push({ entity, configs: await this.read(entity) });
      }
    }
    for (const c of await this.childrenOf(`${CONFIG_PATH}/clients`)) {
      const entity = { user: undefined, clientId: desanitizeEntityName(c) };
      out.push({ entity, configs: await this.read(entity) });
    }
    out.push(...(await this.ips()));
    return out;
  }

  /** Every IP entity (KIP-612) with its configs. */
  async ips(): Promise<EntityConfigs[]> {
    const out: EntityConfigs[] = [];
    for (const name of await this.childrenOf(`${CONFIG_PATH}/ips`)) {
      const entity = { user: undefined, clientId: undefined, ip: desanitizeEntityName(name) };
      out.push({ entity, configs: await this.read(entity) });
    }
    return out;
  }

  private async childrenOf(path: string): Promise<string[]> {
    const result = await this.store.children(path);
    if (!result.ok) return [];
    // A name that does not decode was not written by Kafka's tools or Brook; it is skipped rather than fatal.
    return result.value.filter((name) => {
      try {
        desanitizeEntityName(name);
        return true;
      } catch {
        return false;
      }
    });
  }
}
