// Log dir failure events in Kafka's ZooKeeper layout: a broker whose log directory went offline writes a
// persistent sequential /log_dir_event_notification/log_dir_event_<seq> holding {"version":1,"broker":id,
// "event":1}; the active controller reads the children, deletes them, and asks each named broker which of its
// replicas are offline (a LeaderAndIsr for all it hosts, answered KAFKA_STORAGE_ERROR per offline partition).
//
// Ownership: the broker writes events, the active controller reads and deletes them.

import type { BrokerId } from '../common/ids.js';
import { ANY_VERSION, type CoordinationStore, type StoreResult, type Watcher } from './store/store.js';
import {
  decodeLogDirEvent,
  encodeLogDirEvent,
  LOG_DIR_EVENT_NOTIFICATION_PATH,
  LOG_DIR_EVENT_PREFIX,
  LOG_DIR_FAILURE_EVENT,
  logDirEventCreatePath,
} from './zk-layout/index.js';

/** Bound on the events one read takes (a broker writes one per failed directory). */
const EVENTS_PER_READ_MAX = 1000;

export function writeLogDirFailureEvent(
  store: CoordinationStore,
  brokerId: BrokerId,
): Promise<StoreResult<string>> {
  return store.create(
    logDirEventCreatePath(),
    encodeLogDirEvent({ brokerId, event: LOG_DIR_FAILURE_EVENT }),
    'persistent_sequential',
  );
}

/**
 * Reads the pending events (setting the child watch), deletes them, and answers the brokers they name. A node
 * that cannot be decoded is deleted and logged by the caller through `onBad`.
 */
export async function takeLogDirEvents(
  store: CoordinationStore,
  watcher: Watcher,
  onBad: (name: string) => void,
): Promise<StoreResult<BrokerId[]>> {
  const children = await store.children(LOG_DIR_EVENT_NOTIFICATION_PATH, watcher);
  if (!children.ok) return children.code === 'NONODE' ? { ok: true, value: [] } : children;
  const brokers = new Set<BrokerId>();
  for (const name of children.value.slice(0, EVENTS_PER_READ_MAX)) {
    if (!name.startsWith(LOG_DIR_EVENT_PREFIX)) continue;
    const path = `${LOG_DIR_EVENT_NOTIFICATION_PATH}/${name}`;
    const read = await store.get(path);
    if (!read.ok) continue;
    const event = decodeLogDirEvent(read.value.data);
    if (event.ok && event.value.event === LOG_DIR_FAILURE_EVENT) brokers.add(event.value.brokerId);
    else onBad(name);
    await store.delete(path, ANY_VERSION);
  }
  return { ok: true, value: [...brokers] };
}
