// A stream thread that runs in a worker thread of its own (node:worker_threads), so that an instance with
// num.stream.threads > 1 processes on several cores: the instance's handle on it, with the surface KafkaStreams
// uses of an event-loop StreamThread (LocalThread). The worker (stream-worker.ts) rebuilds the topology from
// brook.topology.module, since a topology holds the user's closures and Node cannot send a closure to a worker;
// the description of the rebuilt topology must equal the instance's, or the thread fails before it joins the
// group. States, task ids, errors and assignments come back as messages, counters through shared memory, and
// interactive queries block on the worker's answer (worker-protocol.ts). A worker about to open new active tasks
// asks (releaseStandbys) that the instance's other workers first close their standbys of them; the instance
// forwards the request to each of them and answers once all have.

import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { ResolvedConfig, StreamsProperties } from '../config.js';
import { StreamsError } from '../errors.js';
import { InvalidStateStoreException } from '../queryable.js';
import { TimeWindow, Windowed } from '../windows.js';
import type { TopicLayout } from './internal-topics.js';
import type { ThreadState } from './stream-thread.js';
import type { AssignmentInfo } from './streams-assignor.js';
import {
  type FromWorker,
  type StoreAnswer,
  type StoreQuery,
  splitProps,
  type ToWorker,
  type WorkerInit,
} from './worker-protocol.js';

/** What KafkaStreams uses of a stream thread, on the event loop or in a worker. */
export interface LocalThread {
  readonly name: string;
  readonly state: ThreadState;
  readonly processed: number;
  readonly restoredRecords: number;
  readonly droppedRecords: number;
  start(): void;
  /** `leaveGroup`: the thread's consumer leaves the group (KafkaStreams' CloseOptions.leaveGroup). */
  close(leaveGroup?: boolean): Promise<void>;
  sendShutdownRequest(): void;
  activeTaskIds(): string[];
  standbyTaskIds(): string[];
}

export interface WorkerThreadHooks {
  onStateChange(thread: WorkerStreamThread, state: ThreadState): void;
  onError(thread: WorkerStreamThread, error: Error): void;
  log(message: string): void;
  onAssignmentInfo(thread: WorkerStreamThread, info: AssignmentInfo, generationId: number): void;
  onShutdownRequested(thread: WorkerStreamThread): void;
  /** The thread opens these tasks as active: every other worker must close its standbys of them first. */
  onReleaseStandbys(thread: WorkerStreamThread, taskIds: string[]): Promise<void>;
}

/** How long an interactive query waits for a busy worker before it gives up. */
const QUERY_TIMEOUT_MS = 10_000;

/** View methods whose answers are lists, put together across workers (the others: first non-null, or a sum). */
const LIST_METHODS: Record<string, Set<string>> = {
  keyValueStore: new Set(['range', 'all']),
  timestampedKeyValueStore: new Set(['range', 'all']),
  windowStore: new Set(['fetchRange', 'fetchAll', 'all']),
  sessionStore: new Set(['fetch', 'findSessions']),
};
/** Answers whose keys are Windowed (rebuilt after cloning, which keeps the fields but not the class). */
const WINDOWED_KEYS: Record<string, Set<string>> = {
  windowStore: new Set(['fetchAll', 'all']),
  sessionStore: new Set(['fetch', 'findSessions']),
};

function unclone(value: unknown): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value)
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    : value;
}

export class WorkerStreamThread implements LocalThread {
  readonly name: string;
  state: ThreadState = 'CREATED';
  /** The worker's threadId (node:worker_threads), once it is up. */
  threadId = -1;
  private readonly worker: Worker;
  private readonly counters: Float64Array;
  private readonly signal: Int32Array;
  private readonly queries: MessagePort;
  private active: string[] = [];
  private standby: string[] = [];
  private readyResolve!: () => void;
  private readyReject!: (e: Error) => void;
  /** Settles once the worker built its topology (or failed to). */
  readonly ready: Promise<void>;
  private closedResolve!: () => void;
  private readonly closed: Promise<void>;
  private isReady = false;
  private exited = false;
  private started = false;
  private shutdownRequest = false;
  /** releaseStandbys requests sent to this worker, waiting for its answer. */
  private readonly releases = new Map<number, () => void>();
  private nextRequestId = 1;

  constructor(
    index: number,
    config: ResolvedConfig,
    props: StreamsProperties,
    layout: TopicLayout,
    processId: string,
    /** The thread's place among the instance's threads (1..num.stream.threads): names its global stores' copy. */
    slot: number,
    /** The instance's topology (topologyFingerprint): the worker's must equal it. */
    private readonly description: string,
    private readonly hooks: WorkerThreadHooks,
  ) {
    if (config.topologyModule === null)
      throw new StreamsError('a worker stream thread needs brook.topology.module');
    this.name = `${config.clientId}-StreamThread-${index}`;
    this.ready = new Promise((resolve, reject) => {
      this.readyResolve = resolve;
      this.readyReject = reject;
    });
    this.ready.catch(() => {}); // also heard through onError
    this.closed = new Promise((resolve) => {
      this.closedResolve = resolve;
    });
    const counters = new SharedArrayBuffer(32);
    const signal = new SharedArrayBuffer(4);
    this.counters = new Float64Array(counters);
    this.signal = new Int32Array(signal);
    const channel = new MessageChannel();
    this.queries = channel.port1;
    this.queries.unref();
    const split = splitProps(props);
    const init: WorkerInit = {
      index,
      props: split.props,
      uncloned: split.uncloned,
      module: config.topologyModule,
      exportName: config.topologyModuleExport,
      layout,
      processId,
      slot,
      counters,
      signal,
      queries: channel.port2,
    };
    this.worker = new Worker(new URL('./stream-worker.js', import.meta.url), {
      workerData: init,
      transferList: [channel.port2],
      name: this.name,
    });
    this.worker.on('message', (m: FromWorker) => this.onMessage(m));
    this.worker.on('error', (e) => this.failed(e));
    this.worker.on('exit', (code) => {
      this.exited = true;
      if (this.state !== 'DEAD' && this.state !== 'PENDING_SHUTDOWN')
        this.failed(new StreamsError(`${this.name}: its worker thread exited (code ${code})`));
      this.setState('DEAD');
      // A worker that is gone holds no standbys.
      for (const resolve of this.releases.values()) resolve();
      this.releases.clear();
      this.closedResolve();
    });
  }

  get processed(): number {
    return this.counters[0]!;
  }

  get restoredRecords(): number {
    return this.counters[1]!;
  }

  /** Changelog records this worker applied to its standby stores. */
  get standbyRecords(): number {
    return this.counters[2]!;
  }

  get droppedRecords(): number {
    return this.counters[3]!;
  }

  /** Has the worker close its standbys of these tasks (another worker takes them over); settles when it did. */
  releaseStandbys(taskIds: string[]): Promise<void> {
    if (this.exited) return Promise.resolve();
    const requestId = this.nextRequestId++;
    const done = new Promise<void>((resolve) => this.releases.set(requestId, resolve));
    this.send({ type: 'releaseStandbys', requestId, taskIds });
    return done;
  }

  private setState(state: ThreadState): void {
    if (this.state === state || this.state === 'DEAD') return;
    this.state = state;
    this.hooks.onStateChange(this, state);
  }

  private failed(e: Error): void {
    if (!this.isReady) {
      this.readyReject(e);
      return;
    }
    this.hooks.onError(this, e);
  }

  private onMessage(m: FromWorker): void {
    switch (m.type) {
      case 'ready':
        this.threadId = m.threadId;
        if (m.description !== this.description) {
          this.readyReject(
            new StreamsError(
              `${this.name}: the topology built from brook.topology.module differs from the one given to KafkaStreams:\n${m.description}`,
            ),
          );
          return;
        }
        this.isReady = true;
        this.readyResolve();
        return;
      case 'state':
        this.active = m.active;
        this.standby = m.standby;
        this.setState(m.state);
        return;
      case 'tasks':
        this.active = m.active;
        this.standby = m.standby;
        return;
      case 'log':
        this.hooks.log(m.message);
        return;
      case 'error': {
        const error = rebuiltError(m);
        if (m.cause !== undefined) error.cause = rebuiltError(m.cause);
        this.failed(error);
        return;
      }
      case 'assignment':
        this.hooks.onAssignmentInfo(this, m.info, m.generationId);
        return;
      case 'shutdownRequested':
        this.hooks.onShutdownRequested(this);
        return;
      case 'releaseStandbys': {
        const { requestId, taskIds } = m;
        void this.hooks
          .onReleaseStandbys(this, taskIds)
          .finally(() => this.send({ type: 'standbysReleased', requestId }));
        return;
      }
      case 'standbysReleased':
        this.releases.get(m.requestId)?.();
        this.releases.delete(m.requestId);
        return;
      case 'closed':
        void this.worker.terminate();
        return;
    }
  }

  private send(message: ToWorker): void {
    if (!this.exited) this.worker.postMessage(message);
  }

  start(): void {
    this.started = true;
    this.send({ type: 'start', shutdownRequest: this.shutdownRequest });
  }

  sendShutdownRequest(): void {
    this.shutdownRequest = true;
    if (this.started) this.send({ type: 'shutdownRequest' });
  }

  /** Closes the stream thread in the worker (a commit unless it failed, checkpoints), then ends the worker. */
  async close(leaveGroup = false): Promise<void> {
    if (this.exited) return;
    if (this.state !== 'DEAD') this.setState('PENDING_SHUTDOWN');
    this.send({ type: 'close', leaveGroup });
    await this.closed;
  }

  activeTaskIds(): string[] {
    return [...this.active];
  }

  standbyTaskIds(): string[] {
    return [...this.standby];
  }

  /** Asks the worker and waits for its answer, blocking this thread (interactive queries are synchronous). */
  private ask(q: StoreQuery): StoreAnswer & { ok: true } {
    if (this.exited || !this.isReady) return { ok: true, count: 0, accepted: true, value: null };
    Atomics.store(this.signal, 0, 0);
    this.queries.postMessage(q);
    const waited = Atomics.wait(this.signal, 0, 0, QUERY_TIMEOUT_MS);
    const got = receiveMessageOnPort(this.queries);
    if (waited === 'timed-out' || got === undefined)
      throw new InvalidStateStoreException(
        `Cannot get state store ${q.store}: ${this.name} did not answer within ${QUERY_TIMEOUT_MS} ms`,
      );
    const answer = got.message as StoreAnswer;
    if (!answer.ok) throw new InvalidStateStoreException(answer.message);
    return answer;
  }

  /** How many running instances of the store this thread holds, and whether the type accepts them all. */
  probeStore(store: string, kind: string, partition: number | null): { count: number; accepted: boolean } {
    const a = this.ask({ op: 'probe', store, kind, partition, method: '', args: [] });
    return { count: a.count, accepted: a.accepted };
  }

  /** One method of the query view of the store over this thread's instances, its answer rebuilt after cloning. */
  callStore(store: string, kind: string, partition: number | null, method: string, args: unknown[]): unknown {
    const value = this.ask({ op: 'call', store, kind, partition, method, args }).value;
    if (!Array.isArray(value)) return unclone(value);
    const windowed = WINDOWED_KEYS[kind]?.has(method) === true;
    return value.map((e: { key: unknown; value: unknown }) => {
      if (e === null || typeof e !== 'object' || !('key' in e)) return unclone(e);
      const key = windowed
        ? (() => {
            const w = e.key as { key: unknown; window: { startMs: number; endMs: number } };
            return new Windowed(unclone(w.key), new TimeWindow(w.window.startMs, w.window.endMs));
          })()
        : unclone(e.key);
      return { key, value: unclone(e.value) };
    });
  }
}

/**
 * The view of a store over several worker threads: each method asks every thread holding an instance, and puts
 * the answers together as Kafka's composite stores do (lists concatenated, counts summed, else the first value).
 */
export function workerStoreView(
  threads: { thread: WorkerStreamThread; count: number }[],
  store: string,
  kind: string,
  partition: number | null,
): Record<string, (...args: unknown[]) => unknown> {
  const lists = LIST_METHODS[kind] ?? new Set<string>();
  return new Proxy({} as Record<string, (...args: unknown[]) => unknown>, {
    get: (_t, prop) => {
      if (typeof prop !== 'string' || prop === 'then') return undefined;
      return (...args: unknown[]) => {
        const answers = threads.map((t) => t.thread.callStore(store, kind, partition, prop, args));
        if (lists.has(prop)) return answers.flatMap((a) => (Array.isArray(a) ? a : []));
        if (prop === 'approximateNumEntries') return answers.reduce((n: number, a) => n + Number(a ?? 0), 0);
        return answers.find((a) => a !== null && a !== undefined) ?? null;
      };
    },
  });
}

/**
 * An error posted by a worker (name, message, stack), made an Error again on this side; a StreamsError (it posts a
 * task id, null or not) is made a StreamsError again, with its task id.
 */
function rebuiltError(posted: {
  name: string;
  message: string;
  stack: string | undefined;
  taskId?: string | null;
}): Error {
  const error = posted.taskId === undefined ? new Error(posted.message) : new StreamsError(posted.message);
  if (error instanceof StreamsError) error.taskId = posted.taskId ?? null;
  error.name = posted.name;
  if (posted.stack !== undefined) error.stack = posted.stack;
  return error;
}
