// What a stream thread in a worker thread (worker-thread.ts, main side; stream-worker.ts, the worker) and the
// instance exchange. Only structured-cloneable data crosses: the topology is rebuilt in the worker from the module
// named by brook.topology.module; properties that are plain data travel, the others (functions, serde objects)
// must come from the module's `streamsProps` export.
//
// Interactive queries are synchronous, as Kafka's: the instance posts a query on a MessagePort of the worker's
// own, blocks on a shared Int32Array with Atomics.wait until the worker answers, then takes the answer with
// receiveMessageOnPort. The worker answers from its event loop, between two of its own steps.

import type { MessagePort } from 'node:worker_threads';
import type { StreamsProperties } from '../config.js';
import type { Topology } from '../topology.js';
import type { TopicLayout } from './internal-topics.js';
import type { ThreadState } from './stream-thread.js';
import type { AssignmentInfo } from './streams-assignor.js';

/** The worker's workerData. */
/**
 * What an instance and its workers compare of their topologies: describe(), and the stores restored from their
 * source topics (reuse.ktable.source.topics, applied by build(props)), which describe() does not show: a module
 * building without the properties would write and restore changelogs the instance never created.
 */
export function topologyFingerprint(topology: Topology): string {
  const reused = [...topology.sourceChangelogs].map(([store, topic]) => `${store} <- ${topic}`).sort();
  const description = topology.describe().toString();
  return reused.length === 0
    ? description
    : `${description}\nStores restored from their source topics: ${reused.join(', ')}`;
}

export interface WorkerInit {
  index: number;
  /** The properties that are plain data. */
  props: StreamsProperties;
  /** Keys whose values could not be cloned: the module's streamsProps must give them. */
  uncloned: string[];
  module: string;
  exportName: string;
  layout: TopicLayout;
  processId: string;
  /**
   * The thread's place among the instance's num.stream.threads (1..n; a replacement takes its predecessor's):
   * names the directory of the worker's copy of the global stores, `global-<slot>`.
   */
  slot: number;
  /**
   * Float64Array(4) over it: records processed, changelog records restored, changelog records applied to
   * standby stores, records dropped (written by the worker).
   */
  counters: SharedArrayBuffer;
  /** Int32Array(1) over it: set to 1 and notified when an answer to a query is posted on `queries`. */
  signal: SharedArrayBuffer;
  queries: MessagePort;
}

export type ToWorker =
  | { type: 'start'; shutdownRequest: boolean }
  | { type: 'shutdownRequest' }
  | { type: 'close'; leaveGroup: boolean }
  /** Another worker takes these tasks over: close their standbys here and answer standbysReleased. */
  | { type: 'releaseStandbys'; requestId: number; taskIds: string[] }
  /** The answer to this worker's releaseStandbys: every other worker has closed those standbys. */
  | { type: 'standbysReleased'; requestId: number };

export type FromWorker =
  | { type: 'ready'; description: string; threadId: number }
  | { type: 'state'; state: ThreadState; active: string[]; standby: string[] }
  | { type: 'tasks'; active: string[]; standby: string[] }
  | { type: 'log'; message: string }
  | {
      type: 'error';
      name: string;
      message: string;
      stack: string | undefined;
      /** A StreamsException's task id (StreamsError.taskId); absent for other errors. */
      taskId?: string | null;
      /** The error's cause, one level (a processing error under the task's StreamsException). */
      cause?: { name: string; message: string; stack: string | undefined };
    }
  | { type: 'assignment'; info: AssignmentInfo; generationId: number }
  | { type: 'shutdownRequested' }
  /** Before opening new active tasks: the other workers must close their standbys of them. */
  | { type: 'releaseStandbys'; requestId: number; taskIds: string[] }
  /** The answer to the instance's releaseStandbys. */
  | { type: 'standbysReleased'; requestId: number }
  | { type: 'closed' };

/** A read through interactive queries: `probe` counts the store's local instances, `call` runs a view method. */
export interface StoreQuery {
  op: 'probe' | 'call';
  store: string;
  /** QueryableStoreTypes' kind (keyValueStore, timestampedKeyValueStore, windowStore, sessionStore). */
  kind: string;
  partition: number | null;
  method: string;
  args: unknown[];
}

export type StoreAnswer =
  | { ok: true; count: number; accepted: boolean; value: unknown }
  | { ok: false; message: string };

/** Plain data: what structured cloning keeps unchanged (no functions, no class instances but Buffers). */
function plain(value: unknown): boolean {
  if (value === null) return true;
  const t = typeof value;
  if (t === 'string' || t === 'number' || t === 'boolean' || t === 'bigint' || t === 'undefined') return true;
  if (t !== 'object') return false;
  if (Array.isArray(value)) return value.every(plain);
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && Object.values(value as object).every(plain);
}

/** The properties split into what a worker can receive and the keys it must get from the module. */
export function splitProps(props: StreamsProperties): { props: StreamsProperties; uncloned: string[] } {
  const out: StreamsProperties = {};
  const uncloned: string[] = [];
  for (const [key, value] of Object.entries(props)) {
    if (plain(value)) out[key] = value;
    else uncloned.push(key);
  }
  return { props: out, uncloned };
}
