// SCRAM credentials in the metadata store, where Kafka keeps them: /config/users/<sanitized user>, one JSON
// document per user holding every mechanism's credential (and any quota keys Kafka puts beside them, kept as
// they are on update). Each write creates Kafka's /config/changes/config_change_N notification for users/<user> in
// the same multi, as Kafka's AdminZkClient does. Brook's brokers read credentials from the store at each
// authentication and need no notification; it is there for every other reader of Kafka's layout.

import type { CoordinationStore } from '../../controller/store/store.js';
import { ANY_VERSION } from '../../controller/store/store.js';
import {
  CONFIG_CHANGES_PATH,
  configChangeCreatePath,
  encodeConfigChange,
} from '../../controller/zk-layout/index.js';
import {
  formatCredential,
  parseCredential,
  type ScramCredential,
  type ScramMechanism,
  userConfigPath,
} from './scram-credential.js';

interface UserConfigDocument {
  version: 1;
  config: Record<string, string>;
}

const USERS_PATH = '/config/users';

/** One mechanism's credential set (credential) or removed (null). */
export interface ScramCredentialChange {
  readonly mechanism: ScramMechanism;
  readonly credential: ScramCredential | null;
}

export class ScramCredentialStore {
  constructor(private readonly store: CoordinationStore) {}

  private async read(user: string): Promise<{ doc: UserConfigDocument; version: number } | null> {
    const result = await this.store.get(userConfigPath(user));
    if (!result.ok) {
      if (result.code === 'NONODE') return null;
      throw new Error(`reading SCRAM credentials of ${user}: ${result.code}`);
    }
    try {
      const doc = JSON.parse(Buffer.from(result.value.data).toString('utf8')) as UserConfigDocument;
      if (typeof doc !== 'object' || doc === null || typeof doc.config !== 'object') return null;
      return { doc, version: result.value.stat.version };
    } catch {
      return null;
    }
  }

  async credential(user: string, mechanism: ScramMechanism): Promise<ScramCredential | null> {
    const found = await this.read(user);
    const text = found?.doc.config[mechanism];
    return typeof text === 'string' ? parseCredential(text) : null;
  }

  /** Every SCRAM mechanism a user has, with its iterations. */
  async describe(user: string): Promise<{ mechanism: ScramMechanism; iterations: number }[]> {
    const found = await this.read(user);
    const out: { mechanism: ScramMechanism; iterations: number }[] = [];
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
      const text = found?.doc.config[mechanism];
      const c = typeof text === 'string' ? parseCredential(text) : null;
      if (c !== null) out.push({ mechanism, iterations: c.iterations });
    }
    return out;
  }

  async users(): Promise<string[]> {
    const result = await this.store.children(USERS_PATH);
    if (!result.ok) return [];
    return result.value.map((segment) => decodeURIComponent(segment));
  }

  /** Sets (credential) or removes (null) one mechanism's credential; false when removing one that is not there. */
  async update(
    user: string,
    mechanism: ScramMechanism,
    credential: ScramCredential | null,
  ): Promise<boolean> {
    return this.alter(user, [{ mechanism, credential }]);
  }

  /**
   * Applies every change to one user in a single write: all of them or, when a removal names a credential the
   * user does not have, none (false, nothing written). Kafka's AlterUserScramCredentials checks each user's
   * removals against the stored document before it changes anything, then writes that user's document once, so
   * a refused request never leaves a user with part of the change (one credential gone, say).
   */
  async alter(user: string, changes: readonly ScramCredentialChange[]): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const found = await this.read(user);
      const removesMissing = changes.some(
        (c) => c.credential === null && found?.doc.config[c.mechanism] === undefined,
      );
      if (removesMissing) return false;
      const doc: UserConfigDocument = found?.doc ?? { version: 1, config: {} };
      for (const { mechanism, credential } of changes) {
        if (credential === null) delete doc.config[mechanism];
        else doc.config[mechanism] = formatCredential(credential);
      }
      const data = Buffer.from(JSON.stringify(doc), 'utf8');
      const path = userConfigPath(user);
      if (found === null) {
        await this.ensure('/config');
        await this.ensure(USERS_PATH);
      }
      await this.ensure(CONFIG_CHANGES_PATH);
      const write =
        found === null
          ? ({ op: 'create', path, data, mode: 'persistent' } as const)
          : ({ op: 'set', path, data, version: found.version } as const);
      const result = await this.store.multi([
        write,
        {
          op: 'create',
          path: configChangeCreatePath(),
          data: encodeConfigChange({ entityPath: path.slice('/config/'.length) }),
          mode: 'persistent_sequential',
        },
      ]);
      if (result.ok) return true;
      // Another writer got there first (created the node, or changed it since it was read): read again.
      if (result.failedOpIndex !== 0 || (result.code !== 'NODEEXISTS' && result.code !== 'BADVERSION'))
        throw new Error(`writing SCRAM credentials of ${user}: ${result.code}`);
    }
    throw new Error(`writing SCRAM credentials of ${user}: too many concurrent updates`);
  }

  private async ensure(path: string): Promise<void> {
    const created = await this.store.create(path, new Uint8Array(0));
    if (!created.ok && created.code !== 'NODEEXISTS') throw new Error(`creating ${path}: ${created.code}`);
  }
}

export { ANY_VERSION };
