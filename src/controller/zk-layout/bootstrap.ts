// Creates the persistent part of Kafka's tree that a broker expects at startup (ZkData.PersistentZkPaths),
// each path with its parents, leaving whatever already exists untouched. Safe to run from several brokers at
// once: a node another broker created first is simply there.

import { type CoordinationStore, failure, type StoreResult, success } from '../store/store.js';
import { PERSISTENT_PATHS } from './paths.js';

const EMPTY = new Uint8Array(0);

/** Creates `path` and any missing parents as empty persistent nodes. */
export async function ensurePath(store: CoordinationStore, path: string): Promise<StoreResult<void>> {
  const segments = path.split('/').filter((s) => s.length > 0);
  let current = '';
  for (const segment of segments) {
    current = `${current}/${segment}`;
    const created = await store.create(current, EMPTY, 'persistent');
    if (!created.ok && created.code !== 'NODEEXISTS') return failure(created.code, current);
  }
  return success(undefined);
}

export async function ensurePersistentPaths(store: CoordinationStore): Promise<StoreResult<void>> {
  for (const path of PERSISTENT_PATHS) {
    const result = await ensurePath(store, path);
    if (!result.ok) return result;
  }
  return success(undefined);
}
