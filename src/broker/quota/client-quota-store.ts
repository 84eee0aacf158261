// Client quota configs in the coordination store, in Kafka's layout (see quota-entity.ts). Writes go through
// DynamicConfig, which adds the /config/changes notification every broker watches; a user's document keeps its
// other keys (SCRAM credentials) as they are, since Kafka keeps both in one document.

import type { CoordinationStore } from '../../controller/store/store.js';
import { CONFIG_PATH } from '../../controller/zk-layout/index.js';
import type { DynamicConfig, EntityRead } from '../dynamic-config.js';
import { desanitizeEntityName, entityConfigPath, type QuotaEntity } from './quota-entity.js';

export interface EntityConfigs {
  readonly entity: QuotaEntity;
  readonly configs: Map<string, string>;
}

/**
 * Every entity read, and apart those whose document was refused: it holds a value that is not a string, which
 * Kafka's ConfigEntityZNode.decode refuses by throwing (see EntityRead). Each caller decides what a refused entity
 * means for it: a describe that Kafka would read it for fails, as Kafka's does; a reload keeps that entity as
 * it was.
 */
export interface StoredEntities {
  readonly read: EntityConfigs[];
  readonly refused: QuotaEntity[];
}

export class ClientQuotaStore {
  constructor(
    private readonly store: CoordinationStore,
    private readonly dynamicConfig: DynamicConfig,
  ) {}

  /**
   * Every key the entity's document holds (quota keys and, for a user, SCRAM credentials); null when the store
   * cannot tell, so that no caller takes a failed read for an entity without quotas.
   */
  read(entity: QuotaEntity): Promise<Map<string, string> | null> {
    return this.dynamicConfig.readEntity(`${CONFIG_PATH}/${entityConfigPath(entity)}`);
  }

  /** As read, for a change notification: whether a failed read is worth another try (see EntityRead). */
  readForChange(entity: QuotaEntity): Promise<EntityRead> {
    return this.dynamicConfig.readEntityForChange(`${CONFIG_PATH}/${entityConfigPath(entity)}`);
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

  /**
   * Every user, user and client id, client id and IP entity in the store, with its configs; null when any of
   * them could not be read (a partial answer would read as quotas removed).
   */
  async all(): Promise<StoredEntities | null> {
    const out: StoredEntities = { read: [], refused: [] };
    const users = await this.childrenOf(`${CONFIG_PATH}/users`);
    if (users === null) return null;
    for (const u of users) {
      const user = desanitizeEntityName(u);
      if (!(await this.add(out, { user, clientId: undefined }))) return null;
      const clients = await this.childrenOf(`${CONFIG_PATH}/users/${u}/clients`);
      if (clients === null) return null;
      for (const c of clients) {
        if (!(await this.add(out, { user, clientId: desanitizeEntityName(c) }))) return null;
      }
    }
    const clients = await this.childrenOf(`${CONFIG_PATH}/clients`);
    if (clients === null) return null;
    for (const c of clients) {
      if (!(await this.add(out, { user: undefined, clientId: desanitizeEntityName(c) }))) return null;
    }
    const ips = await this.ips();
    if (ips === null) return null;
    out.read.push(...ips.read);
    out.refused.push(...ips.refused);
    return out;
  }

  /** Every IP entity (KIP-612) with its configs; null when any could not be read. */
  async ips(): Promise<StoredEntities | null> {
    const out: StoredEntities = { read: [], refused: [] };
    const names = await this.childrenOf(`${CONFIG_PATH}/ips`);
    if (names === null) return null;
    for (const name of names) {
      const entity = { user: undefined, clientId: undefined, ip: desanitizeEntityName(name) };
      if (!(await this.add(out, entity))) return null;
    }
    return out;
  }

  /** Adds the entity to `out`, read or refused; false when the store could not answer. */
  private async add(out: StoredEntities, entity: QuotaEntity): Promise<boolean> {
    const read = await this.readForChange(entity);
    if (read.ok) out.read.push({ entity, configs: read.configs });
    else if (!read.retry) out.refused.push(entity);
    return read.ok || !read.retry;
  }

  /** The entity names under `path`: none when it does not exist, null when the store cannot tell. */
  private async childrenOf(path: string): Promise<string[] | null> {
    const result = await this.store.children(path);
    if (!result.ok) return result.code === 'NONODE' ? [] : null;
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
