// The entry of a worker thread that runs one stream thread (worker-thread.ts starts it). It imports the module
// named by brook.topology.module, builds the topology with the module's export, resolves the configuration (plain
// properties from the instance, the others from the module's `streamsProps`) and runs a StreamThread exactly as
// the instance's event loop would: its own consumer in the group, its own producer (transactional under
// exactly_once_v2, transactional.id with this thread's index), its tasks' stores under state.dir. What the
// instance needs to hear (states, tasks, errors, assignments, log lines) goes back as messages; counters through
// shared memory; interactive queries are answered on their own port (worker-protocol.ts).
//
// Standby tasks: the worker keeps those its thread's assignment lists (a StandbyUpdater of its own, as each of
// Kafka's stream threads maintains its standbys). Before its thread opens a new active task, the instance has
// every other worker close its standby of that task (persistent stores checkpointed, in-memory ones dropped), so
// the thread finds the state and checkpoint on disk. Global stores: the worker keeps a copy of its own (a
// GlobalStreamThread loaded before the thread joins the group), so joins read them synchronously.

// The package's entry first: its modules import each other in cycles that evaluate right only in its order.
import '../index.js';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { resolveConfig, type StreamsProperties, withProcessId } from '../config.js';
import { StreamsConfigError, StreamsError } from '../errors.js';
import { type QueryableStoreType, QueryableStoreTypes } from '../queryable.js';
import type { Topology } from '../topology.js';
import { GlobalStreamThread } from './global-thread.js';
import { StandbyUpdater } from './standby-updater.js';
import { StreamThread } from './stream-thread.js';
import {
  type FromWorker,
  type StoreAnswer,
  type StoreQuery,
  type ToWorker,
  topologyFingerprint,
  type WorkerInit,
} from './worker-protocol.js';

const init = workerData as WorkerInit;
const port = parentPort;
if (port === null) throw new StreamsError('stream-worker.js runs only as a worker thread');
const post = (message: FromWorker): void => port.postMessage(message);
const counters = new Float64Array(init.counters);
const signal = new Int32Array(init.signal);

let thread: StreamThread | null = null;
let startWanted: { shutdownRequest: boolean } | null = null;
let closing = false;
let lastTasks = '';
let standbys: StandbyUpdater | null = null;
let globalStores: GlobalStreamThread | null = null;
/** This worker's releaseStandbys requests waiting for the instance's answer. */
const releases = new Map<number, () => void>();
let nextRequestId = 1;

function tasksNow(t: StreamThread): { active: string[]; standby: string[] } {
  return { active: t.activeTaskIds(), standby: t.standbyTaskIds() };
}

/** Counters into shared memory; task lists posted when they changed (metadataForLocalThreads). */
function report(): void {
  if (thread === null) return;
  counters[0] = thread.processed;
  counters[1] = thread.restoredRecords;
  counters[2] = standbys?.applied ?? 0;
  counters[3] = thread.droppedRecords;
  const tasks = tasksNow(thread);
  const key = `${tasks.active.join(',')}/${tasks.standby.join(',')}`;
  if (key !== lastTasks) {
    lastTasks = key;
    post({ type: 'tasks', ...tasks });
  }
}

function fail(e: unknown): void {
  const error = e instanceof Error ? e : new Error(String(e));
  const c = error.cause;
  const cause = c instanceof Error ? { name: c.name, message: c.message, stack: c.stack } : undefined;
  const taskId = error instanceof StreamsError ? error.taskId : undefined;
  post({ type: 'error', name: error.name, message: error.message, stack: error.stack, taskId, cause });
}

async function build(): Promise<StreamThread> {
  const mod = (await import(init.module)) as Record<string, unknown>;
  const factory = mod[init.exportName];
  if (typeof factory !== 'function')
    throw new StreamsConfigError(
      `brook.topology.module ${init.module} has no function export ${init.exportName} that builds the topology`,
    );
  const topology = (await (factory as () => Topology | Promise<Topology>)()) as Topology;
  if (topology === null || typeof topology !== 'object' || typeof topology.describe !== 'function')
    throw new StreamsConfigError(`${init.exportName}() of ${init.module} did not return a Topology`);
  const fromModule = (mod.streamsProps ?? {}) as StreamsProperties;
  const missing = init.uncloned.filter((k) => !(k in fromModule));
  if (missing.length > 0)
    throw new StreamsConfigError(
      `The values of ${missing.join(', ')} are functions or objects, which cannot reach a worker thread: export them from ${init.module} as streamsProps`,
    );
  const config = withProcessId(resolveConfig({ ...init.props, ...fromModule }, true), init.processId);
  const log = (message: string): void => post({ type: 'log', message });
  if (topology.globalTopics().length > 0) {
    // Loaded to the topics' ends before the thread joins the group, as the instance's global thread is.
    const g = new GlobalStreamThread(
      config,
      topology,
      (topic) => init.layout.partitions.get(topic) ?? 0,
      { log, onError: (e) => fail(e) },
      `global-${init.slot}`,
    );
    globalStores = g;
    try {
      await g.start();
    } catch (e) {
      await g.close().catch(() => {});
      globalStores = null;
      throw e;
    }
  }
  const updater = new StandbyUpdater(config, topology, log);
  standbys = updater;
  const t = new StreamThread(
    init.index,
    config,
    topology,
    init.layout,
    {
      onStateChange: (_t, state) => {
        post({ type: 'state', state, ...tasksNow(_t) });
        report();
      },
      onError: (_t, e) => fail(e),
      log,
      globalStore: (name) => globalStores?.store(name),
      standbys: updater,
      releaseStandbysElsewhere: (taskIds) =>
        new Promise<void>((resolve) => {
          const requestId = nextRequestId++;
          releases.set(requestId, resolve);
          post({ type: 'releaseStandbys', requestId, taskIds });
        }),
      onAssignmentInfo: (_t, info, generationId) => post({ type: 'assignment', info, generationId }),
      onShutdownRequested: () => post({ type: 'shutdownRequested' }),
    },
    init.processId,
  );
  post({ type: 'ready', description: topologyFingerprint(topology), threadId });
  return t;
}

function begin(t: StreamThread, wanted: { shutdownRequest: boolean }): void {
  if (wanted.shutdownRequest) t.sendShutdownRequest();
  t.start();
}

async function close(leaveGroup: boolean): Promise<void> {
  if (closing) return;
  closing = true;
  // The thread first (its close releases its standbys' claims), then the standbys and the global copy, each
  // closed even when an earlier one failed to.
  const steps = [() => thread?.close(leaveGroup), () => standbys?.close(), () => globalStores?.close()];
  for (const step of steps) {
    try {
      await step();
    } catch (e) {
      post({ type: 'log', message: `closing failed: ${(e as Error).message}` });
    }
  }
  for (const resolve of releases.values()) resolve();
  releases.clear();
  report();
  post({ type: 'closed' });
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'start') {
    if (thread !== null) begin(thread, message);
    else startWanted = message;
  } else if (message.type === 'shutdownRequest') {
    if (thread !== null) thread.sendShutdownRequest();
    else startWanted = { shutdownRequest: true };
  } else if (message.type === 'close') void close(message.leaveGroup);
  else if (message.type === 'releaseStandbys') {
    for (const id of message.taskIds) {
      // Another worker runs the task now: its in-memory stores cannot cross to that worker, so they are dropped
      // (the active task restores them from the changelog); persistent ones are left checkpointed on disk.
      if (standbys === null || !standbys.taskIds().includes(id)) continue;
      const handed = standbys.release(id);
      for (const h of handed.values()) h.engine.close();
      post({
        type: 'log',
        message: `standby task ${id} closed for another worker (${handed.size} in-memory stores dropped)`,
      });
    }
    post({ type: 'standbysReleased', requestId: message.requestId });
  } else if (message.type === 'standbysReleased') {
    releases.get(message.requestId)?.();
    releases.delete(message.requestId);
  }
});

/** Buffers arrive as Uint8Arrays; serdes expect Buffers. */
function asBuffers(args: unknown[]): unknown[] {
  return args.map((a) => (a instanceof Uint8Array && !Buffer.isBuffer(a) ? Buffer.from(a) : a));
}

function answer(q: StoreQuery): StoreAnswer {
  if (thread === null) return { ok: true, count: 0, accepted: true, value: null };
  const make = (
    QueryableStoreTypes as unknown as Record<string, (() => QueryableStoreType<unknown>) | undefined>
  )[q.kind];
  const type = make?.();
  if (type === undefined) return { ok: false, message: `unknown queryable store type ${q.kind}` };
  const globalStore = globalStores?.store(q.store);
  const found =
    globalStore !== undefined
      ? [globalStore]
      : thread
          .storesNamed(q.store)
          .filter((e) => q.partition === null || e.partition === q.partition)
          .map((e) => e.store);
  const accepted = found.every((s) => type.accepts(s));
  if (q.op === 'probe' || found.length === 0 || !accepted)
    return { ok: true, count: found.length, accepted, value: null };
  const view = type.create(found) as unknown as Record<string, (...a: unknown[]) => unknown>;
  const method = view[q.method];
  if (typeof method !== 'function') return { ok: false, message: `no method ${q.method} on ${q.kind}` };
  return { ok: true, count: found.length, accepted, value: method.apply(view, asBuffers(q.args)) };
}

init.queries.on('message', (q: StoreQuery) => {
  let out: StoreAnswer;
  try {
    out = answer(q);
  } catch (e) {
    out = { ok: false, message: (e as Error).message };
  }
  try {
    init.queries.postMessage(out);
  } catch (e) {
    init.queries.postMessage({ ok: false, message: `the answer cannot be sent: ${(e as Error).message}` });
  }
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
});

setInterval(report, 100).unref();

build().then(
  (t) => {
    thread = t;
    if (startWanted !== null) begin(t, startWanted);
  },
  (e) => {
    fail(e);
    post({ type: 'closed' });
  },
);
