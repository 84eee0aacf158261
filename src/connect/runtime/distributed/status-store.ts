// Connector and task statuses of every worker in status.storage.topic (Kafka's KafkaStatusBackingStore):
// compacted, keys `status-connector-<name>` and `status-task-<name>-<n>`, values as JsonConverter writes them
// without schemas: {"state": "RUNNING", "trace": null, "worker_id": "host:8083", "generation": 7}. A tombstone
// removes a status (a deleted connector). Each worker writes the statuses of what it runs and reads everyone's,
// so any worker answers GET /connectors/{name}/status for the whole cluster. The topics a connector's tasks used
// (KIP-558) are records too: `status-topic-<topic>:connector-<name>` with
// {"topic": {"name", "connector", "task", "discoverTimestamp"}}, a tombstone when reset.
//
// Ordering across workers: a status written by another worker in an older generation than the one held is
// dropped (a worker that stopped a task in generation 5 must not overwrite the RUNNING written by its new owner
// in generation 6), as Kafka's store does.
//
// Failed writes (Kafka's KafkaStatusBackingStore.send): the store's producer does not retry (retries=0); the store
// sends the same record again itself after a retriable failure (a delivery timeout included: Kafka's
// TimeoutException is retriable), for as long as the status still stands: not after the key was deleted (a
// tombstone read), nor once a status of another generation was written, nor, for a safe write (UNASSIGNED or
// FAILED, Kafka's putSafe), once a later status of the same key was written or another worker's newer one held.
// A write that fails for another reason is given up and its promise rejects. Topic statuses are sent again after
// any retriable failure. stop() ends the re-sends.

import { DeliveryTimeoutError, isRetriableError } from '../../../client/errors.js';
import type { ConsumerRecord } from '../../../client/index.js';
import type { State, Status } from '../status.js';
import type { KafkaBasedLog, LogOpener } from './kafka-based-log.js';

const TOPIC_SEPARATOR = ':connector-';
/**
 * The wait before a failed status write is sent again. Kafka's store resubmits at once; with retries=0 a broker that
 * answers NOT_LEADER_OR_FOLLOWER at once would then be asked again in a tight loop until the metadata is refreshed,
 * so the producer's default retry.backoff.ms is waited first.
 */
const RESEND_BACKOFF_MS = 100;
/** How long stop() waits for the writes under way when it is given no limit. */
const STOP_WAIT_MS = 5_000;

/** The writes of one status key (Kafka's CacheEntry sequence and deleted flag). */
interface WriteEntry {
  /** Bumped by every write of the key: a safe write is not sent again once a later one exists. */
  sequence: number;
  /** A tombstone for the key was read: none of its writes is sent again. */
  deleted: boolean;
}

/** Whether a write failure is one Kafka's store sends the record again for (a RetriableException). */
function isRetriableWriteFailure(err: unknown): boolean {
  // Kafka's producer reports an expired batch as TimeoutException, a RetriableException.
  return err instanceof DeliveryTimeoutError || isRetriableError(err);
}

export interface StoredStatus extends Status {
  generation: number;
}

export class StatusStore {
  private readonly connectors = new Map<string, StoredStatus>();
  /** Active topics (KIP-558) per connector, as `status-topic-<topic>:connector-<name>` records hold them. */
  private readonly topics = new Map<string, Set<string>>();
  private readonly tasks = new Map<string, Map<number, StoredStatus>>();
  private readonly log: KafkaBasedLog;
  private readonly writes = new Map<string, WriteEntry>();
  /** The generation of the last status written (Kafka's store-wide `generation`). */
  private generation = -1;
  private stopped = false;
  /** Writes not yet written nor given up: stop() lets them finish, within its time limit. */
  private readonly pending = new Set<Promise<void>>();

  constructor(open: LogOpener) {
    this.log = open((r) => this.apply(r));
  }

  start(): Promise<void> {
    return this.log.start();
  }

  /** `closeTimeoutMs` bounds the close of the log's clients (KafkaBasedLog.stop). */
  /**
   * Ends the re-sends, waits (within `closeTimeoutMs`, default STOP_WAIT_MS) for the writes under way, such as the
   * UNASSIGNED statuses of a worker that stops, then closes the log.
   */
  async stop(closeTimeoutMs?: number): Promise<void> {
    this.stopped = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.pending]),
      new Promise((r) => {
        timer = setTimeout(r, closeTimeoutMs ?? STOP_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    await this.log.stop(closeTimeoutMs);
  }

  connector(name: string): StoredStatus | undefined {
    return this.connectors.get(name);
  }

  task(name: string, task: number): StoredStatus | undefined {
    return this.tasks.get(name)?.get(task);
  }

  activeTopics(connector: string): string[] {
    return [...(this.topics.get(connector) ?? [])].sort();
  }

  private apply(r: ConsumerRecord): void {
    const key = r.key?.toString('utf8') ?? '';
    if (key.startsWith('status-topic-')) {
      // Topic names cannot hold ':', so the first ':connector-' separates the two names.
      const rest = key.slice('status-topic-'.length);
      const sep = rest.indexOf(TOPIC_SEPARATOR);
      if (sep < 0) return;
      this.trackTopic(rest.slice(sep + TOPIC_SEPARATOR.length), rest.slice(0, sep), r.value !== null);
      return;
    }
    const value = r.value === null ? null : parseStatus(r.value);
    if (r.value === null) this.forgetWrites(key);
    if (key.startsWith('status-connector-')) {
      this.update(this.connectors, key.slice('status-connector-'.length), value);
    } else if (key.startsWith('status-task-')) {
      const rest = key.slice('status-task-'.length);
      const dash = rest.lastIndexOf('-');
      const task = Number(rest.slice(dash + 1));
      if (dash < 0 || !Number.isInteger(task)) return;
      const name = rest.slice(0, dash);
      let map = this.tasks.get(name);
      if (map === undefined) this.tasks.set(name, (map = new Map()));
      this.update(map, task, value);
    }
  }

  private update<K>(map: Map<K, StoredStatus>, key: K, value: StoredStatus | null): void {
    if (value === null) {
      map.delete(key);
      return;
    }
    const held = map.get(key);
    if (held !== undefined && held.workerId !== value.workerId && value.generation < held.generation) return;
    map.set(key, value);
  }

  /**
   * A tombstone read for `key`: its writes are not sent again, and a later write starts a new entry (Kafka's
   * remove()). A connector's tombstone ends the writes of its tasks too.
   */
  private forgetWrites(key: string): void {
    const drop = (k: string) => {
      const entry = this.writes.get(k);
      if (entry !== undefined) entry.deleted = true;
      this.writes.delete(k);
    };
    drop(key);
    if (!key.startsWith('status-connector-')) return;
    const tasks = `status-task-${key.slice('status-connector-'.length)}-`;
    for (const k of [...this.writes.keys()])
      if (k.startsWith(tasks) && /^\d+$/.test(k.slice(tasks.length))) drop(k);
  }

  /**
   * Writes a status (and holds it at once, so this worker's answers do not wait for the round trip). UNASSIGNED
   * and FAILED are Kafka's safe writes (putSafe): not written over another worker's status of a newer generation,
   * and not sent again once a later status of the key was written. Resolves once written or given up.
   */
  async putConnector(name: string, status: Status, generation: number): Promise<void> {
    const stored = { ...status, generation };
    const safe = isSafeWrite(stored);
    const held = () => this.connectors.get(name);
    if (!this.beginWrite(stored, held(), safe)) return;
    this.update(this.connectors, name, stored);
    await this.write(`status-connector-${name}`, stored, held, safe);
  }

  async putTask(name: string, task: number, status: Status, generation: number): Promise<void> {
    const stored = { ...status, generation };
    const safe = isSafeWrite(stored);
    const held = () => this.tasks.get(name)?.get(task);
    if (!this.beginWrite(stored, held(), safe)) return;
    let map = this.tasks.get(name);
    if (map === undefined) this.tasks.set(name, (map = new Map()));
    this.update(map, task, stored);
    await this.write(`status-task-${name}-${task}`, stored, held, safe);
  }

  /** Kafka's send() before the record goes: the store's generation moves on; a safe write may be refused. */
  private beginWrite(status: StoredStatus, held: StoredStatus | undefined, safe: boolean): boolean {
    this.generation = status.generation;
    return !safe || canWriteSafely(held, status);
  }

  /** Sends a status record, and again after each retriable failure for as long as the status stands. */
  private async write(
    key: string,
    status: StoredStatus,
    held: () => StoredStatus | undefined,
    safe: boolean,
  ): Promise<void> {
    let entry = this.writes.get(key);
    if (entry === undefined) this.writes.set(key, (entry = { sequence: 0, deleted: false }));
    const sequence = ++entry.sequence;
    const written = entry;
    const superseded = () =>
      written.deleted ||
      status.generation !== this.generation ||
      (safe && (!canWriteSafely(held(), status) || written.sequence !== sequence));
    await this.sendUntilWritten(key, encode(status), superseded);
  }

  private sendUntilWritten(key: string, value: Buffer | null, superseded: () => boolean): Promise<void> {
    const written = this.resend(key, value, superseded);
    this.pending.add(written);
    const forget = () => this.pending.delete(written);
    written.then(forget, forget);
    return written;
  }

  private async resend(key: string, value: Buffer | null, superseded: () => boolean): Promise<void> {
    for (;;) {
      try {
        await this.log.send(key, value);
        return;
      } catch (err) {
        if (!isRetriableWriteFailure(err) || this.stopped) throw err;
      }
      await new Promise((r) => setTimeout(r, RESEND_BACKOFF_MS));
      if (this.stopped || superseded()) return;
    }
  }

  private trackTopic(connector: string, topic: string, present: boolean): void {
    let set = this.topics.get(connector);
    if (present) {
      if (set === undefined) this.topics.set(connector, (set = new Set()));
      set.add(topic);
    } else {
      set?.delete(topic);
    }
  }

  /** Whether the connector's use of the topic is recorded (putTopic would do nothing). */
  hasTopic(connector: string, topic: string): boolean {
    return this.topics.get(connector)?.has(topic) === true;
  }

  /** Records that a task of the connector used a topic, once per connector and topic (Kafka's topic status). */
  async putTopic(connector: string, topic: string, task: number): Promise<void> {
    if (this.hasTopic(connector, topic)) return;
    this.trackTopic(connector, topic, true);
    const value = { topic: { name: topic, connector, task, discoverTimestamp: Date.now() } };
    await this.sendUntilWritten(
      `status-topic-${topic}${TOPIC_SEPARATOR}${connector}`,
      Buffer.from(JSON.stringify(value), 'utf8'),
      () => false,
    );
  }

  /** Tombstones for every active topic of a connector (PUT /connectors/{name}/topics/reset, a deletion). */
  async resetTopics(connector: string): Promise<void> {
    for (const topic of this.activeTopics(connector)) {
      this.trackTopic(connector, topic, false);
      await this.sendUntilWritten(`status-topic-${topic}${TOPIC_SEPARATOR}${connector}`, null, () => false);
    }
  }

  /**
   * Tombstones for a deleted connector and the given tasks (Kafka's DESTROYED statuses, sent again as any other
   * status while the generation stands).
   */
  async remove(name: string, tasks: number[], generation: number): Promise<void> {
    this.generation = generation;
    for (const t of tasks) {
      this.tasks.get(name)?.delete(t);
      await this.writeTombstone(`status-task-${name}-${t}`, generation);
    }
    this.connectors.delete(name);
    await this.writeTombstone(`status-connector-${name}`, generation);
  }

  private async writeTombstone(key: string, generation: number): Promise<void> {
    let entry = this.writes.get(key);
    if (entry === undefined) this.writes.set(key, (entry = { sequence: 0, deleted: false }));
    entry.sequence++;
    const written = entry;
    await this.sendUntilWritten(key, null, () => written.deleted || generation !== this.generation);
  }
}

/**
 * Kafka's CacheEntry.canWriteSafely: nothing held, or held from the same worker, or from a generation not newer
 * than the status's.
 */
/** Kafka's herder writes UNASSIGNED (onShutdown) and FAILED (onFailure) with putSafe, every other state with put. */
function isSafeWrite(status: StoredStatus): boolean {
  return status.state === 'UNASSIGNED' || status.state === 'FAILED';
}

function canWriteSafely(held: StoredStatus | undefined, status: StoredStatus): boolean {
  return held === undefined || held.workerId === status.workerId || held.generation <= status.generation;
}

function encode(s: StoredStatus): Buffer {
  return Buffer.from(
    JSON.stringify({ state: s.state, trace: s.trace, worker_id: s.workerId, generation: s.generation }),
    'utf8',
  );
}

function parseStatus(bytes: Buffer): StoredStatus | null {
  const v = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  if (typeof v.state !== 'string' || typeof v.worker_id !== 'string') return null;
  return {
    state: v.state as State,
    trace: typeof v.trace === 'string' ? v.trace : null,
    workerId: v.worker_id,
    generation: typeof v.generation === 'number' ? v.generation : 0,
  };
}
