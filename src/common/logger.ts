// A small leveled logger. Lines go to stderr as `[time] LEVEL component: message`, the way operators grep Kafka's
// server.log. Tests inject a recording logger instead.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  child(component: string): Logger;
}

export function createLogger(
  component = 'brook',
  level: LogLevel = (process.env.BROOK_LOG_LEVEL as LogLevel | undefined) ?? 'info',
  sink: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Logger {
  const threshold = LEVEL_RANK[level] ?? LEVEL_RANK.info;
  const emit = (lvl: LogLevel, message: string): void => {
    if (LEVEL_RANK[lvl] < threshold) return;
    sink(`[${new Date().toISOString()}] ${lvl.toUpperCase()} ${component}: ${message}`);
  };
  return {
    debug: (m) => emit('debug', m),
    info: (m) => emit('info', m),
    warn: (m) => emit('warn', m),
    error: (m) => emit('error', m),
    child: (name) => createLogger(`${component}.${name}`, level, sink),
  };
}

/** A logger that keeps its lines, for tests that assert what was logged. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger('test', 'debug', (line) => lines.push(line));
  return Object.assign(logger, { lines });
}

export const silentLogger: Logger = createLogger('silent', 'error', () => {});
