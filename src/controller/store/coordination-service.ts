// Where sessions come from: the one seam the broker and the controller need, whichever store is configured.
//
// A CoordinationStore dies with its session; an owner that sees `expired` asks the service for a new session
// and registers again. coordinationServiceFor() picks the implementation from Kafka's settings:
// zookeeper.connect set means the ZooKeeper ensemble it names; unset means the in-process store, persisted in
// `__brook_metadata` under the first log dir (one broker, nothing else to run).

import { join } from 'node:path';
import type { Clock } from '../../common/clock.js';
import { InProcessStore } from './in-process-store.js';
import { METADATA_DIR_NAME } from './metadata-files.js';
import type { CoordinationStore, StoreResult } from './store.js';
import { success } from './store.js';
import { connectZooKeeper } from './zookeeper-store.js';

export interface CoordinationService {
  /** Which store this is, for logs: "in-process <dir>" or "zookeeper <connect string>". */
  readonly description: string;
  /** Opens a new session; CONNECTIONLOSS when ZooKeeper cannot be reached in the connection timeout. */
  openSession(): Promise<StoreResult<CoordinationStore>>;
  /** Releases what the service holds (the in-process store's files); close the sessions first. */
  close(): Promise<void>;
}

/** The settings of Kafka's that choose and tune the store. */
export interface CoordinationSettings {
  /** zookeeper.connect; null or empty for the in-process store. */
  readonly zookeeperConnect: string | null;
  /** log.dirs; the in-process store lives under the first. */
  readonly logDirs: readonly string[];
  /** zookeeper.session.timeout.ms (Kafka's default 18000). */
  readonly sessionTimeoutMs?: number;
  /** zookeeper.connection.timeout.ms (Kafka defaults it to the session timeout). */
  readonly connectionTimeoutMs?: number;
  readonly clock?: Clock;
}

const DEFAULT_SESSION_TIMEOUT_MS = 18_000;

export function coordinationServiceFor(settings: CoordinationSettings): CoordinationService {
  const sessionTimeoutMs = settings.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
  if (settings.zookeeperConnect !== null && settings.zookeeperConnect.trim() !== '') {
    return zooKeeperService(settings.zookeeperConnect.trim(), sessionTimeoutMs, settings.connectionTimeoutMs);
  }
  const firstLogDir = settings.logDirs[0];
  if (firstLogDir === undefined)
    throw new Error('log.dirs is empty: the in-process store has nowhere to live');
  const dataDir = join(firstLogDir, METADATA_DIR_NAME);
  const store = InProcessStore.open(
    settings.clock === undefined ? { dataDir } : { dataDir, clock: settings.clock },
  );
  return inProcessService(store, dataDir, sessionTimeoutMs);
}

export function inProcessService(
  store: InProcessStore,
  dataDir: string,
  sessionTimeoutMs: number,
): CoordinationService {
  return {
    description: `in-process ${dataDir}`,
    openSession: async () => success(store.openSession({ sessionTimeoutMs })),
    close: async () => store.close(),
  };
}

export function zooKeeperService(
  connect: string,
  sessionTimeoutMs: number,
  connectionTimeoutMs = sessionTimeoutMs,
): CoordinationService {
  return {
    description: `zookeeper ${connect}`,
    openSession: () => connectZooKeeper({ connect, sessionTimeoutMs, connectionTimeoutMs }),
    close: async () => {},
  };
}
