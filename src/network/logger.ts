// A tiny leveled logger behind an interface, so the network layer can log closed connections without owning
// where log lines go. The broker passes its own; tests pass a capturing one. Candidate for src/common.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Structured context attached to a log line (connection id, remote address, reason). */
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const levelRank: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Where formatted lines go; stderr by default so that stdout stays free for command output. */
export type LogSink = (line: string) => void;

const stderrSink: LogSink = (line) => {
  process.stderr.write(`${line}\n`);
};

function format(level: LogLevel, name: string, message: string, fields: LogFields | undefined): string {
  let line = `${new Date().toISOString()} ${level.toUpperCase()} [${name}] ${message}`;
  if (fields !== undefined) {
    for (const key of Object.keys(fields)) {
      const value = fields[key];
      if (value !== undefined) line += ` ${key}=${JSON.stringify(value)}`;
    }
  }
  return line;
}

/** A logger that drops lines below `level`. Formatting happens only for lines that are kept. */
export function createLogger(name: string, level: LogLevel = 'info', sink: LogSink = stderrSink): Logger {
  const min = levelRank[level];
  const at =
    (lineLevel: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      if (levelRank[lineLevel] >= min) sink(format(lineLevel, name, message, fields));
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const ignore = (): void => {};

/** A logger that discards everything (benchmarks). */
export const silentLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };

/** One captured log line, for tests that assert a connection was closed for the right reason. */
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
  /** Lines whose message contains `text`. */
  matching(text: string): CapturedLine[] {
    return this.lines.filter((line) => line.message.includes(text));
  }
}
