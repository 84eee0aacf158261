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

import type { ConsumerRecord } from '../../../client/index.js';
import type { State, Status } from '../status.js';
import type { KafkaBasedLog, LogOpener } from './kafka-based-log.js';

const TOPIC_SEPARATOR = ':connector-';

export interface StoredStatus extends Status {
  generation: number;
}

export class StatusStore {
  private readonly connectors = new Map<string, StoredStatus>();
  /** Active topics (KIP-558) per connector, as `status-topic-<topic>:connector-<name>` records hold them. */
  private readonly topics = new Map<string, Set<string>>();
  private readonly tasks = new Map<string, Map<number, StoredStatus>>();
  private readonly log: KafkaBasedLog;

  constructor(open: LogOpener) {
    this.log = open((r) => this.apply(r));
  }

  start(): Promise<void> {
    return this.log.start();
  }

  /** `closeTimeoutMs` bounds the close of the log's clients (KafkaBasedLog.stop). */
  stop(closeTimeoutMs?: number): Promise<void> {
    return this.log.stop(closeTimeoutMs);
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

  /** Writes a status (and holds it at once, so this worker's answers do not wait for the round trip). */
  async putConnector(name: string, status: Status, generation: number): Promise<void> {
    const stored = { ...status, generation };
    this.update(this.connectors, name, stored);
    await this.log.send(`status-connector-${name}`, encode(stored));
  }

  async putTask(name: string, task: number, status: Status, generation: number): Promise<void> {
    const stored = { ...status, generation };
    let map = this.tasks.get(name);
    if (map === undefined) this.tasks.set(name, (map = new Map()));
    this.update(map, task, stored);
    await this.log.send(`status-task-${name}-${task}`, encode(stored));
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
    await this.log.send(
      `status-topic-${topic}${TOPIC_SEPARATOR}${connector}`,
      Buffer.from(JSON.stringify(value), 'utf8'),
    );
  }

  /** Tombstones for every active topic of a connector (PUT /connectors/{name}/topics/reset, a deletion). */
  async resetTopics(connector: string): Promise<void> {
    for (const topic of this.activeTopics(connector)) {
      this.trackTopic(connector, topic, false);
      await this.log.send(`status-topic-${topic}${TOPIC_SEPARATOR}${connector}`, null);
    }
  }

  /** Tombstones for a deleted connector and the given tasks. */
  async remove(name: string, tasks: number[]): Promise<void> {
    this.connectors.delete(name);
    await this.log.send(`status-connector-${name}`, null);
    for (const t of tasks) {
      this.tasks.get(name)?.delete(t);
      await this.log.send(`status-task-${name}-${t}`, null);
    }
  }
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
