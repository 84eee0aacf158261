// A small leveled logger with structured fields. Lines go to stderr (stdout stays free for command output) as
// `time LEVEL [component] message key=value ...`, the way operators grep Kafka's server.log. Components form a
// dotted path (brook.controller); tests pass a CapturingLogger and assert on what was logged. A logger's level is
// fixed when it is created, or, created over a LogLevels (`brook server`, a Connect worker), the one that set gives
// its name at each line, so that it can change at run time (log-levels.ts).

import { type KafkaLogLevel, LOG_LEVEL_RANK, LogLevels } from './log-levels.js';

/** Brook's line levels; trace is for per-record detail (Kafka's Connect writes such lines at TRACE). */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** Structured context attached to a log line (connection id, remote address, reason). */
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

export interface Logger {
  trace(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger for a part of this component, writing to the same place. */
  child(component: string): Logger;
  /**
   * Whether a line of `level` would be written now (SLF4J's isTraceEnabled). A per-record trace line is guarded by
   * it, read once per batch, so that a disabled level builds no message on the per-record path.
   */
  enabled(level: LogLevel): boolean;
}

/** Where formatted lines go. */
export type LogSink = (line: string) => void;

const stderrSink: LogSink = (line) => {
  process.stderr.write(`${line}\n`);
};

function format(level: LogLevel, name: string, message: string, fields: LogFields | undefined): string {
  let line = `[${new Date().toISOString()}] ${level.toUpperCase()} ${name}: ${message}`;
  if (fields !== undefined) {
    for (const key of Object.keys(fields)) {
      const value = fields[key];
      if (value !== undefined) line += ` ${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`;
    }
  }
  return line;
}

function defaultLevel(): LogLevel {
  const env = process.env.BROOK_LOG_LEVEL;
  return env === 'trace' || env === 'debug' || env === 'info' || env === 'warn' || env === 'error'
    ? env
    : 'info';
}

const KAFKA_NAME: Readonly<Record<LogLevel, KafkaLogLevel>> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
};

/** Brook's level as Kafka (log4j) names it. */
export function kafkaLogLevel(level: LogLevel): KafkaLogLevel {
  return KAFKA_NAME[level];
}

/** Where a line of `level` stands on log-levels.ts's scale, which a logger's threshold is read on too. */
function rank(level: LogLevel): number {
  return LOG_LEVEL_RANK[KAFKA_NAME[level]];
}

/** Run-time levels for a process's loggers, its root at BROOK_LOG_LEVEL (info when unset). */
export function runtimeLogLevels(): LogLevels {
  return new LogLevels(kafkaLogLevel(defaultLevel()));
}

/**
 * A logger that drops lines below `level`: a fixed level, or the level `level` gives this logger's name (it is
 * registered there), read again after each change. Lines that are dropped are never formatted.
 */
export function createLogger(
  name = 'brook',
  level: LogLevel | LogLevels = defaultLevel(),
  sink: LogSink = stderrSink,
): Logger {
  const writes = level instanceof LogLevels ? levelsFilter(name, level) : fixedFilter(rank(level));
  const at =
    (lineLevel: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      if (writes(rank(lineLevel))) sink(format(lineLevel, name, message, fields));
    };
  return {
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (component) => createLogger(`${name}.${component}`, level, sink),
    enabled: (lineLevel) => writes(rank(lineLevel)),
  };
}

function fixedFilter(min: number): (rank: number) => boolean {
  return (rank) => rank >= min;
}

function levelsFilter(name: string, levels: LogLevels): (rank: number) => boolean {
  levels.register(name);
  let version = -1;
  let min = 0;
  return (rank) => {
    // A change is rare and a line is not: the level is looked up again only when the set has changed.
    if (version !== levels.version) {
      version = levels.version;
      min = LOG_LEVEL_RANK[levels.levelOf(name)];
    }
    return rank >= min;
  };
}

const ignore = (): void => {};

/** A logger that discards everything (benchmarks, tests that do not look at logs). */
export const silentLogger: Logger = {
  trace: ignore,
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  child: () => silentLogger,
  enabled: () => false,
};

/** One captured log line, for tests that assert something was logged for the right reason. */
export interface CapturedLine {
  readonly level: LogLevel;
  readonly message: string;
  readonly fields: LogFields;
}

/** A logger that keeps lines in memory, bounded so a long test cannot grow it without limit. */
export class CapturingLogger implements Logger {
  readonly lines: CapturedLine[] = [];
  constructor(private readonly linesMax = 10_000) {}
  private keep(level: LogLevel, message: string, fields: LogFields | undefined): void {
    if (this.lines.length < this.linesMax) this.lines.push({ level, message, fields: fields ?? {} });
  }
  trace(message: string, fields?: LogFields): void {
    this.keep('trace', message, fields);
  }
  debug(message: string, fields?: LogFields): void {
    this.keep('debug', message, fields);
  }
  info(message: string, fields?: LogFields): void {
    this.keep('info', message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.keep('warn', message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.keep('error', message, fields);
  }
  /** Children share the parent's lines, so a test sees everything a component logged. */
  child(): Logger {
    return this;
  }
  /** Everything is kept. */
  enabled(): boolean {
    return true;
  }
  /** Lines whose message contains `text`. */
  matching(text: string): CapturedLine[] {
    return this.lines.filter((line) => line.message.includes(text));
  }
}
