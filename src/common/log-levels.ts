// The log levels a process's loggers obey at run time, which Kafka's broker loggers (KIP-412: DescribeConfigs and
// IncrementalAlterConfigs on BROKER_LOGGER resources) read and change: the root logger's level, a level set on any
// logger by name, and the names of the loggers created so far (createLogger registers them). A logger's level is
// its own, else that of its nearest dotted ancestor with one (brook.controller takes brook's), else the root's,
// as in log4j. Levels carry log4j's names; Brook writes trace, debug, info, warn and error lines (trace only for
// per-record detail in Connect's task runners), so ALL lets through what TRACE does, and FATAL and OFF stop error
// lines too. The broker takes Kafka's six levels; Connect's
// /admin/loggers takes log4j's eight, ALL and OFF included (src/connect/runtime/loggers.ts). Nothing is persisted:
// as in Kafka, a restart starts again from the process's initial level.
//
// Owned by whoever creates the process's loggers (`brook server`, a Connect worker); one instance per process or
// worker, shared by every logger it creates, changed only from the event loop.

/** Kafka's valid log levels (LogLevelConfig.VALID_LOG_LEVELS), lowest first. */
export const KAFKA_LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;
export type KafkaLogLevel = (typeof KAFKA_LOG_LEVELS)[number];

/** log4j's levels (Level.toLevel), lowest first: Kafka's valid ones, and ALL and OFF, which Connect accepts. */
export const LOG4J_LEVELS = ['ALL', ...KAFKA_LOG_LEVELS, 'OFF'] as const;
export type Log4jLevel = (typeof LOG4J_LEVELS)[number];

/** A line is written when its level's rank is at least its logger's; logger.ts ranks its lines on this scale. */
export const LOG_LEVEL_RANK: Readonly<Record<Log4jLevel, number>> = {
  ALL: 0,
  TRACE: 5,
  DEBUG: 10,
  INFO: 20,
  WARN: 30,
  ERROR: 40,
  FATAL: 50,
  OFF: 60,
};

/** Kafka's name of the root logger (Log4jController.ROOT_LOGGER). */
export const ROOT_LOGGER = 'root';

/**
 * Logger names kept for listing and setting. Brook's loggers have fixed names, a few dozen; a logger created
 * beyond the bound still obeys its ancestors' and the root's levels, it just cannot be named.
 */
export const LOGGER_NAMES_MAX = 1_000;

export function isKafkaLogLevel(text: string): text is KafkaLogLevel {
  return (KAFKA_LOG_LEVELS as readonly string[]).includes(text);
}

export class LogLevels {
  private rootLevel: Log4jLevel;
  private readonly own = new Map<string, Log4jLevel>();
  private readonly names = new Set<string>();
  private changes = 0;

  constructor(rootLevel: Log4jLevel) {
    this.rootLevel = rootLevel;
  }

  /** Counts the changes, so that a logger re-reads its level only after one. */
  get version(): number {
    return this.changes;
  }

  /** Records a logger's name (createLogger calls it for every logger it makes). */
  register(name: string): void {
    if (name !== ROOT_LOGGER && this.names.size < LOGGER_NAMES_MAX) this.names.add(name);
  }

  /** Whether a logger of this name exists: the root, or one created (log4j's LogManager.exists). */
  exists(name: string): boolean {
    return name === ROOT_LOGGER || this.names.has(name);
  }

  /** Sets a logger's own level; the root's is the level of every logger without one of its own. */
  set(name: string, level: Log4jLevel): void {
    if (name === ROOT_LOGGER) this.rootLevel = level;
    else this.own.set(name, level);
    this.changes++;
  }

  /** Removes a logger's own level, so that it takes its ancestors' again. The root always keeps one. */
  unset(name: string): void {
    if (this.own.delete(name)) this.changes++;
  }

  /** A logger's own level (log4j's Logger.getLevel()): null when it takes its ancestors'. The root always has one. */
  ownLevel(name: string): Log4jLevel | null {
    return name === ROOT_LOGGER ? this.rootLevel : (this.own.get(name) ?? null);
  }

  /** The level a logger writes at: its own, else its nearest ancestor's, else the root's. */
  levelOf(name: string): Log4jLevel {
    if (name === ROOT_LOGGER) return this.rootLevel;
    for (let prefix = name; ; ) {
      const level = this.own.get(prefix);
      if (level !== undefined) return level;
      const dot = prefix.lastIndexOf('.');
      if (dot < 0) return this.rootLevel;
      prefix = prefix.slice(0, dot);
    }
  }

  /** Every named logger with the level it writes at, the root first, then by name. */
  loggers(): [name: string, level: Log4jLevel][] {
    const named = [...this.names].sort().map((n): [string, Log4jLevel] => [n, this.levelOf(n)]);
    return [[ROOT_LOGGER, this.rootLevel], ...named];
  }
}
