// Which bytes engine a store gets: in memory, or persistent (LMDB) under the task's directory.

import { join } from 'node:path';
import type { BytesKeyValueStore } from '../state/bytes-store.js';
import { InMemoryBytesStore } from '../state/bytes-store.js';
import { LmdbBytesStore } from '../state/lmdb-store.js';
import type { StoreBuilder } from '../state/stores.js';

export function openEngine(builder: StoreBuilder, taskDir: string): BytesKeyValueStore {
  if (builder.engine === 'persistent') return new LmdbBytesStore(join(taskDir, 'lmdb', builder.name));
  return new InMemoryBytesStore();
}
