// Which bytes engine a store gets: in memory, or persistent under the task's directory.

import type { BytesKeyValueStore } from '../state/bytes-store.js';
import { InMemoryBytesStore } from '../state/bytes-store.js';
import type { StoreBuilder } from '../state/stores.js';

export function openEngine(_builder: StoreBuilder, _taskDir: string): BytesKeyValueStore {
  // Persistent stores are kept in memory until the LMDB engine lands; the changelog restores them.
  return new InMemoryBytesStore();
}
