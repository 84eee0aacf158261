// A broker's presence in the cluster: the ephemeral /brokers/ids/<id> with its endpoints and rack, and the
// cluster id at /cluster/id, created by the first broker that finds it missing.
//
// The registration lives as long as the broker's store session. When the session expires the broker opens a
// new one and calls registerBroker again; the new node has a new czxid, which is the broker epoch the
// controller puts in its requests, so requests meant for the previous incarnation are refused by epoch.

import type { BrokerId } from '../common/ids.js';
import { newUuid, type Random, systemRandom } from './random.js';
import type { ChildrenWithStat, CoordinationStore, Stat, StoreErrorCode } from './store/store.js';
import {
  BROKER_IDS_PATH,
  type BrokerRegistration,
  brokerPath,
  CLUSTER_ID_PATH,
  decodeBrokerRegistration,
  decodeClusterId,
  encodeBrokerRegistration,
  encodeClusterId,
  ensurePath,
  ensurePersistentPaths,
} from './zk-layout/index.js';

export interface RegisteredBroker {
  readonly clusterId: string;
  /** The czxid of the registration node, Kafka's broker epoch. */
  readonly brokerEpoch: number;
}

/** Creates of the registration node that found a node gone by the time it was read (each a session that ended). */
const CREATE_ATTEMPTS_MAX = 3;

export type RegistrationResult =
  | { readonly ok: true; readonly value: RegisteredBroker }
  | { readonly ok: false; readonly reason: string; readonly code?: StoreErrorCode };

/**
 * Makes sure Kafka's persistent paths exist, reads (or creates) the cluster id, and creates the broker's
 * ephemeral registration. Another live session holding the same broker id is an error, as in Kafka.
 */
export async function registerBroker(
  store: CoordinationStore,
  registration: BrokerRegistration,
  random: Random = systemRandom,
): Promise<RegistrationResult> {
  const paths = await ensurePersistentPaths(store);
  if (!paths.ok) return { ok: false, reason: `creating ${paths.path ?? 'paths'} failed`, code: paths.code };
  const clusterId = await getOrCreateClusterId(store, random);
  if (!clusterId.ok) return clusterId;
  const path = brokerPath(registration.brokerId);
  for (let attempt = 1; ; attempt++) {
    const created = await store.create(path, encodeBrokerRegistration(registration), 'ephemeral');
    if (!created.ok && created.code !== 'NODEEXISTS') {
      return { ok: false, reason: `registering ${path} failed`, code: created.code };
    }
    const node = await store.get(path);
    if (!node.ok && node.code === 'NONODE' && attempt < CREATE_ATTEMPTS_MAX) {
      // The node the create found was a previous session's, and that session expired before this read: the id
      // is free now (a broker restarted just as ZooKeeper let its earlier run go). Create again.
      continue;
    }
    if (!node.ok) return { ok: false, reason: `reading ${path} failed`, code: node.code };
    return ownRegistration(store, registration, node.value.stat, clusterId.value);
  }
}

/** The registration read back: this session's (the broker epoch is its czxid), or another live session's. */
function ownRegistration(
  store: CoordinationStore,
  registration: BrokerRegistration,
  stat: Stat,
  clusterId: string,
): RegistrationResult {
  if (stat.ephemeralOwner !== store.sessionId) {
    return {
      ok: false,
      reason: `broker id ${registration.brokerId} is already registered by another session (${stat.ephemeralOwner})`,
      code: 'NODEEXISTS',
    };
  }
  return { ok: true, value: { clusterId, brokerEpoch: stat.czxid } };
}

/**
 * Makes sure Kafka's persistent paths exist and reads (or creates) the cluster id, without registering: a broker
 * needs the id to check its log directories before it registers (Kafka's getOrGenerateClusterId).
 */
export async function readClusterId(
  store: CoordinationStore,
  random: Random = systemRandom,
): Promise<{ ok: true; value: string } | { ok: false; reason: string; code?: StoreErrorCode }> {
  const paths = await ensurePersistentPaths(store);
  if (!paths.ok) return { ok: false, reason: `creating ${paths.path ?? 'paths'} failed`, code: paths.code };
  return getOrCreateClusterId(store, random);
}

async function getOrCreateClusterId(
  store: CoordinationStore,
  random: Random,
): Promise<{ ok: true; value: string } | { ok: false; reason: string; code?: StoreErrorCode }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await store.get(CLUSTER_ID_PATH);
    if (existing.ok) {
      const decoded = decodeClusterId(existing.value.data);
      if (!decoded.ok) return { ok: false, reason: decoded.error.message };
      return { ok: true, value: decoded.value };
    }
    if (existing.code !== 'NONODE')
      return { ok: false, reason: 'reading the cluster id failed', code: existing.code };
    const parent = await ensurePath(store, '/cluster');
    if (!parent.ok) return { ok: false, reason: 'creating /cluster failed', code: parent.code };
    const id = newUuid(random);
    const created = await store.create(CLUSTER_ID_PATH, encodeClusterId(id), 'persistent');
    if (created.ok) return { ok: true, value: id };
    // Another broker created it first: read theirs.
    if (created.code !== 'NODEEXISTS')
      return { ok: false, reason: 'creating the cluster id failed', code: created.code };
  }
  return { ok: false, reason: 'the cluster id kept changing while it was read' };
}

/**
 * The children of /brokers/ids and the parent's cversion (children created plus deleted: ZooKeeper reports its
 * stored count of creations times two minus the live children), read together. Two of them tell whether a
 * broker's registration came and went in between, unseen: more changes than the two sets differ by.
 */
export interface RegisteredBrokers {
  readonly cversion: number;
  /** Every numeric child, sorted (a registration that does not decode is registered all the same). */
  readonly live: readonly BrokerId[];
}

/** The registered brokers in one read of /brokers/ids' children and stat (getChildren2). */
export function registeredBrokers(children: ChildrenWithStat): RegisteredBrokers {
  const live = children.names.filter((n) => /^\d{1,10}$/.test(n)).map((n) => Number(n) as BrokerId);
  return { cversion: children.stat.cversion, live: live.sort((a, b) => a - b) };
}

export interface LiveBroker {
  readonly registration: BrokerRegistration;
  /** The czxid of the registration node. */
  readonly epoch: number;
}

/**
 * Reads every registered broker. A registration that cannot be decoded is skipped and reported in `bad`, so
 * that one damaged node does not hide the others. `watcher`, when given, is set on the children of
 * /brokers/ids. `registered` is what that read of the children saw, with the parent's cversion.
 */
export async function readLiveBrokers(
  store: CoordinationStore,
  watcher?: () => void,
  /** When given, a data watch on each registration (Kafka's BrokerModifications: endpoints or rack change). */
  dataWatcher?: (id: BrokerId) => () => void,
): Promise<
  | { ok: true; brokers: Map<BrokerId, LiveBroker>; bad: string[]; registered: RegisteredBrokers }
  | { ok: false; code: StoreErrorCode }
> {
  // The watcher is passed as it is: the store counts one function registered twice on a path once.
  const children = await store.childrenWithStat(BROKER_IDS_PATH, watcher);
  if (!children.ok) return { ok: false, code: children.code };
  const brokers = new Map<BrokerId, LiveBroker>();
  const bad: string[] = [];
  const reads = await Promise.all(
    children.value.names
      .filter((n) => /^\d{1,10}$/.test(n))
      .map(async (name) => ({
        name,
        node: await store.get(`${BROKER_IDS_PATH}/${name}`, dataWatcher?.(Number(name) as BrokerId)),
      })),
  );
  for (const { name, node } of reads) {
    if (!node.ok) {
      if (node.code === 'NONODE') continue; // it went away between the two reads
      return { ok: false, code: node.code };
    }
    const id = Number(name) as BrokerId;
    const decoded = decodeBrokerRegistration(id, node.value.data);
    if (!decoded.ok) {
      bad.push(`${name}: ${decoded.error.message}`);
      continue;
    }
    brokers.set(id, { registration: decoded.value, epoch: node.value.stat.czxid });
  }
  return { ok: true, brokers, bad, registered: registeredBrokers(children.value) };
}

/**
 * Rewrites this broker's own registration in place (Kafka's updateBrokerInfo after a dynamic listener change):
 * same node, same session, so the broker epoch stays; the controller's data watch sees new endpoints and sends
 * every broker the metadata with them. Refused when the node is not this session's (it expired or was fenced:
 * the next registration carries the new endpoints anyway).
 */
export async function updateBrokerRegistration(
  store: CoordinationStore,
  registration: BrokerRegistration,
): Promise<{ ok: true } | { ok: false; reason: string; code?: StoreErrorCode }> {
  const path = brokerPath(registration.brokerId);
  const node = await store.get(path);
  if (!node.ok) return { ok: false, reason: `reading ${path} failed`, code: node.code };
  if (node.value.stat.ephemeralOwner !== store.sessionId) {
    return { ok: false, reason: `${path} belongs to another session` };
  }
  const written = await store.set(path, encodeBrokerRegistration(registration), node.value.stat.version);
  if (!written.ok) return { ok: false, reason: `writing ${path} failed`, code: written.code };
  return { ok: true };
}
