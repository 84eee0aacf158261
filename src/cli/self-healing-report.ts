// What the tools can say of brokers that are gone and what self-healing does about them. The failure times are
// the controller's own: it writes each gone broker's wall-clock failure time and the moves it started into
// /brook_self_healing (self-healing-state.ts) the moment it notes the broker gone, so any reader of the store
// sees the same "gone since" the controller's log and metrics use. A Kafka client cannot read the store; the
// tools that know it (`brook cluster status`, which started the cluster's ZooKeeper) read it here.

import type { Admin } from '../client/admin.js';
import {
  decodeSelfHealingState,
  type PersistedFailedBroker,
  SELF_HEALING_STATE_PATH,
} from '../controller/self-healing-state.js';
import { connectZooKeeper } from '../controller/store/index.js';
import { BROKER_IDS_PATH } from '../controller/zk-layout/index.js';

export const SELF_HEALING_TIMEOUT_KEY = 'brook.self.healing.broker.failure.timeout.ms';

/** The controller's brook.self.healing.broker.failure.timeout.ms; null when it cannot be read (another Kafka). */
export async function selfHealingTimeout(admin: Admin, controllerId: number): Promise<number | null> {
  if (controllerId < 0) return null;
  try {
    const [r] = await admin.describeConfigs([
      { type: 'broker', name: String(controllerId), keys: [SELF_HEALING_TIMEOUT_KEY] },
    ]);
    const value = r?.configs.find((c) => c.name === SELF_HEALING_TIMEOUT_KEY)?.value;
    return value === undefined || value === null || !/^-?\d+$/.test(value) ? null : Number(value);
  } catch {
    return null;
  }
}

/** The registered brokers and the self-healing state, as the store holds them. */
export interface StoredBrokerState {
  readonly registered: ReadonlySet<number>;
  readonly failed: ReadonlyMap<number, PersistedFailedBroker>;
}

/** Reads both from the ZooKeeper at `connect`; null when it does not answer within `timeoutMs`. */
export async function readStoredBrokerState(
  connect: string,
  timeoutMs = 10_000,
): Promise<StoredBrokerState | null> {
  const session = await connectZooKeeper({
    connect,
    sessionTimeoutMs: 6000,
    connectionTimeoutMs: timeoutMs,
    requestTimeoutMs: timeoutMs,
  });
  if (!session.ok) return null;
  const store = session.value;
  try {
    const ids = await store.children(BROKER_IDS_PATH);
    if (!ids.ok && ids.code !== 'NONODE') return null;
    const registered = new Set(ids.ok ? ids.value.map(Number) : []);
    const node = await store.get(SELF_HEALING_STATE_PATH);
    const decoded = node.ok ? decodeSelfHealingState(node.value.data) : null;
    const failed = decoded?.ok ? decoded.value.brokers : new Map<number, PersistedFailedBroker>();
    return { registered, failed };
  } finally {
    await store.close();
  }
}

/**
 * One line's worth on a broker that is not registered: since when the controller counts it gone and what
 * self-healing does (waits until a time, moves n partitions, is off); null for a registered broker.
 */
export function goneBrokerNote(
  id: number,
  state: StoredBrokerState,
  timeoutMs: number | null,
  nowMs: number,
): string | null {
  if (state.registered.has(id)) return null;
  const f = state.failed.get(id);
  if (timeoutMs !== null && timeoutMs < 0)
    return `not registered; self-healing is off (${SELF_HEALING_TIMEOUT_KEY}=-1)`;
  if (f === undefined) return 'not registered; the controller has not noted it gone yet';
  const since = `gone since ${new Date(f.failedAtMs).toISOString()} (${Math.round((nowMs - f.failedAtMs) / 1000)} s)`;
  if (f.moving.length > 0) return `${since}; self-healing is moving ${f.moving.length} partitions off it`;
  const kept = f.operatorCancelled.length;
  const cancelled = kept > 0 ? `; ${kept} partitions stay on it: an operator cancelled their moves` : '';
  if (timeoutMs === null) return `${since}${cancelled}`;
  const at = f.failedAtMs + timeoutMs;
  if (at > nowMs) return `${since}; self-healing moves its replicas at ${new Date(at).toISOString()}`;
  return `${since}; self-healing's timeout ended at ${new Date(at).toISOString()}, no move in progress${cancelled}`;
}
