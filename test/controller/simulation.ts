// A seeded simulation of the controller: five brokers on one in-process store, each running a controller,
// driven through random broker deaths and restarts, ISR changes from leaders, controlled shutdowns and
// preferred elections. After every step the cluster is let settle and invariants are checked:
//
// - at most one controller is active, and one is whenever a broker is alive;
// - every partition state is well formed: ISR non-empty, within the replicas, the leader in the ISR (or -1);
// - leader epochs never go back, and one leader epoch names one leader;
// - with unclean election off, every new leader was in the ISR before the change;
// - a partition is leaderless only when no ISR member is alive and eligible;
// - a live leader is alive, and every live replica has been told the current leader and leader epoch.

import assert from 'node:assert/strict';
import type { BrokerId } from '../../src/common/ids.js';
import { registerBroker } from '../../src/controller/broker-registration.js';
import type { BrokerChannel } from '../../src/controller/channel.js';
import { Controller } from '../../src/controller/controller.js';
import { type Random, seededRandom } from '../../src/controller/random.js';
import { InProcessStore } from '../../src/controller/store/in-process-store.js';
import type { CoordinationStore } from '../../src/controller/store/store.js';
import { TopicAdmin } from '../../src/controller/topic-admin.js';
import {
  decodePartitionState,
  decodeTopicAssignment,
  type PartitionState,
  partitionStatePath,
  topicPath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type {
  LeaderAndIsrRequest,
  LeaderAndIsrResponse,
} from '../../src/protocol/messages/04-leader-and-isr.js';
import type { StopReplicaResponse } from '../../src/protocol/messages/05-stop-replica.js';
import type { UpdateMetadataResponse } from '../../src/protocol/messages/06-update-metadata.js';
import { liveEpoch, registration } from './helpers.js';

const BROKERS = [1, 2, 3, 4, 5];
const TOPICS = ['a', 'b', 'c'];

/** What each broker has been told by LeaderAndIsr: partition → (leader, leader epoch) with the highest epoch. */
class SimulatedNetwork implements BrokerChannel {
  readonly told = new Map<
    number,
    Map<string, { leader: number; leaderEpoch: number; controllerEpoch: number }>
  >();
  readonly violations: string[] = [];

  async leaderAndIsr(brokerId: BrokerId, request: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse> {
    const known = this.told.get(brokerId) ?? new Map();
    this.told.set(brokerId, known);
    for (const t of request.topicStates) {
      for (const p of t.partitionStates) {
        const key = `${t.topicId}:${t.topicName}-${p.partitionIndex}`;
        const before = known.get(key);
        if (
          before !== undefined &&
          request.controllerEpoch === before.controllerEpoch &&
          p.leaderEpoch < before.leaderEpoch
        ) {
          this.violations.push(
            `broker ${brokerId} got epoch ${p.leaderEpoch} after ${before.leaderEpoch} for ${key}`,
          );
        }
        if (before === undefined || p.leaderEpoch >= before.leaderEpoch) {
          known.set(key, {
            leader: p.leader,
            leaderEpoch: p.leaderEpoch,
            controllerEpoch: request.controllerEpoch,
          });
        }
      }
    }
    return { errorCode: ErrorCode.NONE, partitionErrors: [], topics: [] };
  }

  async updateMetadata(): Promise<UpdateMetadataResponse> {
    return { errorCode: ErrorCode.NONE };
  }

  async stopReplica(): Promise<StopReplicaResponse> {
    return { errorCode: ErrorCode.NONE, partitionErrors: [] };
  }
}

interface SimBroker {
  session: CoordinationStore | null;
  readonly controller: Controller;
  shuttingDown: boolean;
}

export interface SimulationResult {
  readonly steps: number;
  readonly leaderChanges: number;
  readonly failovers: number;
  /** Partition-steps in which a partition's replica set changed. */
  readonly reassignmentSteps: number;
  /** Times the deletable topic was deleted to the end. */
  readonly deletions: number;
}

export async function simulate(seed: number, steps: number): Promise<SimulationResult> {
  const random = seededRandom(seed);
  const store = InProcessStore.open({ dataDir: null });
  const network = new SimulatedNetwork();
  const observer = store.openSession();
  const brokers = new Map<number, SimBroker>();
  try {
    for (const id of BROKERS) {
      const session = store.openSession();
      assert.ok((await registerBroker(session, registration(id), seededRandom(seed + id))).ok);
      const controller = new Controller({
        brokerId: id as BrokerId,
        store: session,
        channel: network,
        random: seededRandom(seed * 31 + id),
      });
      brokers.set(id, { session, controller, shuttingDown: false });
    }
    for (const b of brokers.values()) await b.controller.start();
    const topicAdmin = new TopicAdmin({
      store: observer,
      defaults: { numPartitions: 4, replicationFactor: 3, deleteTopicEnable: true },
      random: seededRandom(seed),
    });
    const created = await topicAdmin.createTopics(
      TOPICS.map((name) => ({
        name,
        numPartitions: -1,
        replicationFactor: -1,
        assignments: [],
        configs: {},
      })),
      false,
    );
    for (const r of created) assert.equal(r.errorCode, ErrorCode.NONE);
    let replicas = await readReplicas(observer);
    await settleAll(brokers);

    const epochLeaders = new Map<string, Map<number, number>>();
    let previous = await readStates(observer, replicas);
    let leaderChanges = 0;
    let failovers = 0;
    let reassignmentSteps = 0;
    let deletions = 0;
    let lastControllerEpoch = activeController(brokers)?.epoch ?? -1;
    for (let step = 0; step < steps; step++) {
      const action = await act(random, brokers, store, seed, previous, replicas);
      await settleAll(brokers);
      const previousReplicas = replicas;
      const previousIds = new Map(topicIds);
      replicas = await readReplicas(observer);
      const states = await readStates(observer, replicas);
      const where = `seed ${seed} step ${step} (${action})`;
      const active = [...brokers.values()].filter((b) => b.controller.isActive);
      assert.ok(active.length <= 1, `${where}: ${active.length} active controllers`);
      const anyAlive = [...brokers.values()].some((b) => b.session !== null);
      assert.equal(active.length, anyAlive ? 1 : 0, `${where}: active controllers`);
      const epoch = active[0]?.controller.epoch ?? lastControllerEpoch;
      if (epoch !== lastControllerEpoch) failovers += 1;
      assert.ok(epoch >= lastControllerEpoch, `${where}: controller epoch went back`);
      lastControllerEpoch = epoch;
      for (const [topic, id] of topicIds) {
        if (previousIds.get(topic) !== id)
          for (const k of [...epochLeaders.keys()]) if (splitKey(k)[0] === topic) epochLeaders.delete(k);
      }
      const deleting = await checkDeletion(where, observer, replicas, brokers);
      if (previousIds.has(DELETABLE) && !topicIds.has(DELETABLE)) deletions += 1;
      for (const [key, state] of states) {
        const reps = replicas.get(key)!;
        const [topic] = splitKey(key);
        const fresh = previousIds.get(topic) !== topicIds.get(topic) || !previous.has(key);
        const before = fresh ? { ...state, leaderEpoch: 0 as never, isr: state.isr } : previous.get(key)!;
        // A topic queued for deletion is left as it is (Kafka elects no leaders for it) until it goes.
        if (deleting && topic === DELETABLE) continue;
        checkState(where, key, state, before, reps, brokers, epochLeaders);
        if (fresh) continue;
        if (!sameSet(reps, previousReplicas.get(key)!)) reassignmentSteps += 1;
        if (state.leader !== before.leader) leaderChanges += 1;
        if (state.leader >= 0) {
          for (const r of reps) {
            if (brokers.get(r)!.session === null) continue;
            const told = network.told.get(r)?.get(`${topicIds.get(topic)}:${key}`);
            assert.equal(
              told?.leader,
              state.leader,
              `${where}: broker ${r} was not told the leader of ${key}`,
            );
            assert.equal(
              told?.leaderEpoch,
              state.leaderEpoch,
              `${where}: broker ${r} has an old epoch for ${key}`,
            );
          }
        }
      }
      previous = states;
    }
    assert.deepEqual(network.violations, []);
    return { steps, leaderChanges, failovers, reassignmentSteps, deletions };
  } finally {
    for (const b of brokers.values()) if (b.session !== null) await b.controller.stop();
    store.close();
  }
}

/** A topic marked for deletion must be gone once every replica's broker is alive. */
async function checkDeletion(
  where: string,
  observer: CoordinationStore,
  replicas: Map<string, number[]>,
  brokers: Map<number, SimBroker>,
): Promise<boolean> {
  const marker = await observer.exists(`/admin/delete_topics/${DELETABLE}`);
  assert.ok(marker.ok);
  if (marker.value === null) return false;
  const hosts = [...replicas].filter(([k]) => splitKey(k)[0] === DELETABLE).flatMap(([, r]) => r);
  const waiting = hosts.some((b) => brokers.get(b)!.session === null);
  assert.ok(waiting, `${where}: ${DELETABLE} still marked for deletion with all replicas alive`);
  return true;
}

function checkState(
  where: string,
  key: string,
  state: PartitionState,
  before: PartitionState,
  reps: readonly number[],
  brokers: Map<number, SimBroker>,
  epochLeaders: Map<string, Map<number, number>>,
): void {
  const alive = (b: number) => brokers.get(b)?.session !== null;
  const eligible = (b: number) => alive(b) && !brokers.get(b)!.shuttingDown;
  assert.ok(state.isr.length > 0, `${where}: ${key} has an empty ISR`);
  assert.ok(
    state.isr.every((r) => reps.includes(r)),
    `${where}: ${key} ISR ${state.isr} outside ${reps}`,
  );
  if (state.leader !== -1) {
    assert.ok(
      state.isr.includes(state.leader),
      `${where}: ${key} leader ${state.leader} not in ISR ${state.isr}`,
    );
    assert.ok(alive(state.leader), `${where}: ${key} led by dead broker ${state.leader}`);
  } else {
    assert.ok(
      !state.isr.some(eligible),
      `${where}: ${key} leaderless while ISR ${state.isr} has an eligible broker`,
    );
  }
  assert.ok(state.leaderEpoch >= before.leaderEpoch, `${where}: ${key} leader epoch went back`);
  if (state.leader !== before.leader && state.leader !== -1) {
    const inSync = before.isr.includes(state.leader) || (joined.get(key) ?? []).includes(state.leader);
    assert.ok(inSync, `${where}: ${key} new leader ${state.leader} was not in ISR ${before.isr}`);
  }
  const leaders = epochLeaders.get(key) ?? new Map<number, number>();
  epochLeaders.set(key, leaders);
  const known = leaders.get(state.leaderEpoch);
  assert.ok(
    known === undefined || known === state.leader,
    `${where}: ${key} epoch ${state.leaderEpoch} had two leaders`,
  );
  leaders.set(state.leaderEpoch, state.leader);
}

function activeController(brokers: Map<number, SimBroker>): Controller | undefined {
  return [...brokers.values()].find((b) => b.controller.isActive)?.controller;
}

async function act(
  random: Random,
  brokers: Map<number, SimBroker>,
  store: InProcessStore,
  seed: number,
  states: Map<string, PartitionState & { version: number }>,
  replicas: Map<string, number[]>,
): Promise<string> {
  joined.clear();
  const live = [...brokers].filter(([, b]) => b.session !== null).map(([id]) => id);
  const dead = [...brokers].filter(([, b]) => b.session === null).map(([id]) => id);
  const roll = random.nextInt(100);
  if (roll < 25 && live.length > 1) {
    const id = live[random.nextInt(live.length)]!;
    const b = brokers.get(id)!;
    store.expireSession(b.session!.sessionId);
    b.session = null;
    b.shuttingDown = false;
    return `kill ${id}`;
  }
  if (roll < 50 && dead.length > 0) {
    const id = dead[random.nextInt(dead.length)]!;
    const b = brokers.get(id)!;
    const session = store.openSession();
    assert.ok((await registerBroker(session, registration(id), seededRandom(seed + id))).ok);
    b.session = session;
    b.shuttingDown = false;
    b.controller.restart(session);
    return `restart ${id}`;
  }
  const controller = activeController(brokers);
  if (controller === undefined) return 'nothing';
  if (roll < 80) {
    // A leader changes its ISR: some live replicas join or leave, the leader stays.
    const keys = [...states.keys()];
    const key = keys[random.nextInt(keys.length)]!;
    const state = states.get(key)!;
    if (state.leader < 0) return `no leader for ${key}`;
    const candidates = replicas
      .get(key)!
      .filter((r) => r !== state.leader && brokers.get(r)!.session !== null);
    const newIsr = [state.leader, ...candidates.filter(() => random.nextInt(2) === 0)];
    const [topic, partition] = splitKey(key);
    const answer = await controller.alterPartition(
      {
        brokerId: state.leader,
        brokerEpoch: liveEpoch(controller, state.leader),
        topics: [
          {
            topicName: topic,
            topicId: '',
            partitions: [
              {
                partitionIndex: partition,
                leaderEpoch: state.leaderEpoch,
                newIsr,
                newIsrWithEpochs: [],
                leaderRecoveryState: 0,
                partitionEpoch: state.version,
              },
            ],
          },
        ],
      },
      2,
    );
    const code = answer.topics[0]?.partitions[0]?.errorCode;
    if (code === ErrorCode.NONE) joined.set(key, newIsr);
    // Joining while in controlled shutdown is refused; everything else from the current leader succeeds.
    const joinsShuttingDown = newIsr.some((r) => brokers.get(r)!.shuttingDown);
    // A topic being deleted answers UNKNOWN_TOPIC_OR_PARTITION.
    // Its partitions keep their last leader, perhaps a dead broker, whose request is refused by epoch.
    const deleting =
      topic === DELETABLE &&
      (code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || answer.errorCode === ErrorCode.STALE_BROKER_EPOCH);
    if (!joinsShuttingDown && !deleting)
      assert.equal(code, ErrorCode.NONE, `AlterPartition ${key} [${newIsr}]`);
    return `alter ${key} isr [${newIsr}] -> ${code}`;
  }
  if (roll < 88 && live.length >= 3) {
    const keys = [...states.keys()];
    const key = keys[random.nextInt(keys.length)]!;
    const [topic, partition] = splitKey(key);
    const pool = [...live];
    const target: number[] = [];
    while (target.length < 3) target.push(pool.splice(random.nextInt(pool.length), 1)[0]!);
    const cancel = random.nextInt(3) === 0;
    const answer = await controller.alterPartitionReassignments({
      timeoutMs: 1000,
      topics: [
        { name: topic, partitions: [{ partitionIndex: partition, replicas: cancel ? null : target }] },
      ],
    });
    const result = answer.responses[0]?.partitions[0];
    const code = result?.errorCode;
    if (topic === DELETABLE && code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
      return `reassign ${key}: being deleted`;
    const acceptable: number[] = [
      ErrorCode.NONE,
      ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    ];
    assert.ok(
      code !== undefined && acceptable.includes(code),
      `reassign ${key}: ${code} ${result?.errorMessage}`,
    );
    // A broker in controlled shutdown may not be added (Kafka's live brokers leave it out); any other refusal is
    // for want of a replica to lead.
    const addsShuttingDown = !cancel && target.some((r) => brokers.get(r)!.shuttingDown);
    if (code === ErrorCode.INVALID_REPLICA_ASSIGNMENT)
      assert.match(
        result!.errorMessage!,
        addsShuttingDown ? /alive and in sync|not alive/ : /alive and in sync/,
      );
    return `${cancel ? 'cancel reassignment of' : 'reassign'} ${key}${cancel ? '' : ` to [${target}]`} -> ${code}`;
  }
  if (roll < 96) {
    const exists = [...states.keys()].some((k) => splitKey(k)[0] === DELETABLE) || topicIds.has(DELETABLE);
    const admin = new TopicAdmin({
      store: brokers.get(live[0]!)!.session!,
      defaults: { numPartitions: 1, replicationFactor: 3, deleteTopicEnable: true },
      random,
    });
    if (exists) {
      const [deleted] = await admin.deleteTopics([DELETABLE]);
      assert.equal(deleted!.errorCode, ErrorCode.NONE);
      return `delete ${DELETABLE}`;
    }
    if (live.length < 3) return 'nothing';
    const partitions = 1 + random.nextInt(3);
    const [created] = await admin.createTopics(
      [{ name: DELETABLE, numPartitions: partitions, replicationFactor: -1, assignments: [], configs: {} }],
      false,
    );
    // Still marked for deletion when a replica's broker is dead: the name stays taken.
    const ok: number[] = [ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS];
    assert.ok(ok.includes(created!.errorCode), `create ${DELETABLE}: ${created!.errorMessage}`);
    return `create ${DELETABLE} with ${partitions} partitions -> ${created!.errorCode}`;
  }
  if (roll < 98 && live.length > 1) {
    const id = live[random.nextInt(live.length)]!;
    const answer = await controller.controlledShutdown({ brokerId: id, brokerEpoch: -1n });
    assert.equal(answer.errorCode, ErrorCode.NONE);
    brokers.get(id)!.shuttingDown = true;
    return `controlled shutdown ${id}`;
  }
  const answer = await controller.electLeaders({ electionType: 0, topicPartitions: null, timeoutMs: 1000 });
  assert.equal(answer.errorCode, ErrorCode.NONE);
  return 'preferred election';
}

async function readReplicas(observer: CoordinationStore): Promise<Map<string, number[]>> {
  const replicas = new Map<string, number[]>();
  topicIds.clear();
  for (const t of [...TOPICS, DELETABLE]) {
    const node = await observer.get(topicPath(t));
    if (!node.ok && node.code === 'NONODE' && t === DELETABLE) continue;
    assert.ok(node.ok);
    const decoded = decodeTopicAssignment(node.value.data);
    assert.ok(decoded.ok);
    topicIds.set(t, decoded.value.topicId ?? '');
    for (const [p, a] of decoded.value.partitions) replicas.set(`${t}-${p}`, [...a.replicas]);
  }
  return replicas;
}

/** The topic that the simulation deletes and creates again. */
const DELETABLE = 'd';
/** Topic ids as last read, so that a re-created topic is not compared with its predecessor. */
const topicIds = new Map<string, string>();

function sameSet(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/** The ISR a leader set in this step (a reassignment may finish right after, from that ISR). */
const joined = new Map<string, number[]>();

function splitKey(key: string): [string, number] {
  const i = key.lastIndexOf('-');
  return [key.slice(0, i), Number(key.slice(i + 1))];
}

async function readStates(
  observer: CoordinationStore,
  replicas: Map<string, number[]>,
): Promise<Map<string, PartitionState & { version: number }>> {
  const out = new Map<string, PartitionState & { version: number }>();
  for (const key of replicas.keys()) {
    const [topic, partition] = splitKey(key);
    const node = await observer.get(partitionStatePath(topic, partition as never));
    if (!node.ok && node.code === 'NONODE' && topic === DELETABLE) continue;
    assert.ok(node.ok, `${key} has a state`);
    const decoded = decodePartitionState(node.value.data);
    assert.ok(decoded.ok);
    out.set(key, { ...decoded.value, version: node.value.stat.version });
  }
  return out;
}

async function settleAll(brokers: Map<number, SimBroker>): Promise<void> {
  for (let round = 0; round < 3; round++) {
    for (const b of brokers.values()) {
      await new Promise((resolve) => setImmediate(resolve));
      await b.controller.sync();
    }
  }
}
