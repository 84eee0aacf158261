// A Connect worker's loggers and the levels they obey, which Kafka Connect's /admin/loggers reads and sets (KIP-495;
// `scope` from KIP-976). Each part of the worker logs through a logger named after the Kafka class that does the
// same work (CONNECT_LOGGERS), so the names operators set in Kafka (Strimzi's
// `org.apache.kafka.connect.runtime.WorkerSinkTask: DEBUG`, or the root at WARN) filter the same lines here. The
// levels are a LogLevels (src/common/log-levels.ts: a logger's own level, else its nearest dotted ancestor's, else
// the root's, as in log4j) and the lines are src/common/logger.ts's, written to the worker's sink.
//
// The REST rules are those of Kafka's Loggers over log4j: the root logger (`root`, any case) at the process's
// initial level (INFO unless BROOK_LOG_LEVEL says otherwise), the worker's loggers known from the start, a logger
// created by setting a level on its name, a level set on a namespace applied to every known logger whose name
// starts with it, `last_modified` moved only by a real change. Nothing is persisted: a restart starts again from
// the initial level, as Kafka's worker does.
//
// One instance per worker, created by whoever assembles it (standalone.ts, distributed.ts, MirrorMaker for all of
// its flows) and handed to the Worker, which shares it with everything it runs; changed only from the event loop.

import { LOG4J_LEVELS, type Log4jLevel, type LogLevels, ROOT_LOGGER } from '../../common/log-levels.js';
import { createLogger, type Logger, type LogSink, runtimeLogLevels } from '../../common/logger.js';

/**
 * The names of the worker's loggers: the Kafka class doing the same work as each part of Brook's Connect runtime.
 * Kafka's worker has many more (one per class); these are the parts Brook has.
 */
export const CONNECT_LOGGERS = {
  /** The command's start and stop lines (connect-worker.ts). */
  connect: 'org.apache.kafka.connect.runtime.Connect',
  worker: 'org.apache.kafka.connect.runtime.Worker',
  /** What every task runner shares (worker-task.ts): a task that fails or cannot close. */
  workerTask: 'org.apache.kafka.connect.runtime.WorkerTask',
  workerSinkTask: 'org.apache.kafka.connect.runtime.WorkerSinkTask',
  workerSourceTask: 'org.apache.kafka.connect.runtime.WorkerSourceTask',
  exactlyOnceWorkerSourceTask: 'org.apache.kafka.connect.runtime.ExactlyOnceWorkerSourceTask',
  /** errors.log.enable's lines (error-handler.ts). */
  logReporter: 'org.apache.kafka.connect.runtime.errors.LogReporter',
  /** A dead letter queue write that failed (error-handler.ts). */
  deadLetterQueueReporter: 'org.apache.kafka.connect.runtime.errors.DeadLetterQueueReporter',
  abstractHerder: 'org.apache.kafka.connect.runtime.AbstractHerder',
  standaloneHerder: 'org.apache.kafka.connect.runtime.standalone.StandaloneHerder',
  distributedHerder: 'org.apache.kafka.connect.runtime.distributed.DistributedHerder',
  /** The internal topics' keys (kafka-based-log.ts storageTopicSettings). */
  distributedConfig: 'org.apache.kafka.connect.runtime.distributed.DistributedConfig',
  kafkaBasedLog: 'org.apache.kafka.connect.util.KafkaBasedLog',
  /** A source connector's own offsets topic with the worker's as its secondary (connector-offset-store.ts). */
  connectorOffsetBackingStore: 'org.apache.kafka.connect.storage.ConnectorOffsetBackingStore',
  restServer: 'org.apache.kafka.connect.runtime.rest.RestServer',
  /** plugin.path (builtin-plugins.ts). */
  plugins: 'org.apache.kafka.connect.runtime.isolation.Plugins',
  loggers: 'org.apache.kafka.connect.runtime.Loggers',
  mirrorMaker: 'org.apache.kafka.connect.mirror.MirrorMaker',
} as const;

/** A logger's level as GET /admin/loggers shows it: its own, else the inherited one. */
export interface LoggerLevel {
  level: string;
  /** When a request last changed it (ms since the epoch), null if none did. */
  last_modified: number | null;
}

/** The log4j level a request names (any case), or null when it names none. */
export function log4jLevel(text: string): Log4jLevel | null {
  const upper = text.toUpperCase();
  return (LOG4J_LEVELS as readonly string[]).includes(upper) ? (upper as Log4jLevel) : null;
}

export class Loggers {
  private readonly levels: LogLevels;
  /** When a request last changed each logger's level (Kafka's lastModifiedTimes), by name; root as `root`. */
  private readonly lastModifiedMs = new Map<string, number>();
  private readonly created = new Map<string, Logger>();
  private readonly log: Logger;

  constructor(
    /** Where the worker's lines go, formatted (time, level, logger name, message). */
    private readonly sink: LogSink,
    levels: LogLevels = runtimeLogLevels(),
    private readonly nowMs: () => number = Date.now,
  ) {
    this.levels = levels;
    // Known from the start, so that GET and PUT find them before the part that logs through one first runs.
    for (const name of Object.values(CONNECT_LOGGERS)) this.logger(name);
    this.log = this.logger(CONNECT_LOGGERS.loggers);
  }

  /** The logger of that name, writing to the worker's sink at the level the worker's levels give it. */
  logger(name: string): Logger {
    let logger = this.created.get(name);
    if (logger === undefined) {
      logger = createLogger(name, this.levels, this.sink);
      this.created.set(name, logger);
    }
    return logger;
  }

  /** A known logger's level, or null (Kafka's 404) for a name that is no logger. */
  level(name: string): LoggerLevel | null {
    const known = rootName(name) ?? (this.levels.exists(name) ? name : null);
    if (known === null) {
      this.log.warn(`Unable to find level for logger ${name}`);
      return null;
    }
    return this.levelOf(known);
  }

  /** The loggers with a level of their own, root included, by name. */
  allLevels(): Record<string, LoggerLevel> {
    const out: Record<string, LoggerLevel> = {};
    const named = this.levels.loggers().map(([name]) => name);
    for (const name of named.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
      if (this.levels.ownLevel(name) !== null) out[name] = this.levelOf(name);
    return out;
  }

  /**
   * Sets `level` on the namespace and every known logger under it (root: on every logger), creating the
   * namespace's logger if needed; returns the names of those loggers, sorted, as Kafka does.
   */
  setLevel(namespace: string, level: Log4jLevel): string[] {
    this.log.info(`Setting level of namespace ${namespace} and children to ${level}`);
    const known = this.levels.loggers().map(([name]) => name);
    const isRoot = rootName(namespace) !== null;
    const affected = isRoot
      ? known
      : known.filter((name) => name !== ROOT_LOGGER && name.startsWith(namespace));
    if (!isRoot && !this.levels.exists(namespace)) {
      // log4j's LogManager.getLogger: the namespace becomes a logger. Past LogLevels' bound of names it is not
      // kept as one, but its level is still set below, so it still applies to the loggers under it.
      this.levels.register(namespace);
      affected.push(namespace);
    }
    // As Kafka's, a logger already at that level (its own or inherited) is left as it is. The levels are read
    // before any is set, so a child does not count as unchanged for inheriting its parent's new level (in Kafka
    // that depends on the order log4j happens to list them in).
    const unchanged = new Set(affected.filter((name) => this.levels.levelOf(name) === level));
    for (const name of affected) {
      if (unchanged.has(name)) {
        this.log.debug(`Skipping update for logger ${name} since its level is already ${level}`);
        continue;
      }
      this.log.debug(`Setting level of logger ${name} (excluding children) to ${level}`);
      this.levels.set(name, level);
      this.lastModifiedMs.set(name, this.nowMs());
    }
    return affected.sort();
  }

  private levelOf(name: string): LoggerLevel {
    return { level: this.levels.levelOf(name), last_modified: this.lastModifiedMs.get(name) ?? null };
  }
}

/** log4j's root logger answers to `root` in any case. */
function rootName(name: string): typeof ROOT_LOGGER | null {
  return name.toLowerCase() === ROOT_LOGGER ? ROOT_LOGGER : null;
}
