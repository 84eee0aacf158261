// Connectors get no logger from the Connect API; the Mirror connectors write their lines to stderr, prefixed
// with the flow, as the worker's own log lines are. They are not the worker's loggers: /admin/loggers levels do
// not filter them.

import type { Logger, LogLevel } from '../../common/logger.js';

export function mirrorLog(flow: string, line: string): void {
  process.stderr.write(`[${new Date().toISOString()}] [${flow}] ${line}\n`);
}

/**
 * A Logger over a connector's line function, for the runtime parts a Mirror connector uses itself (a
 * KafkaBasedLog over the offset syncs or checkpoints topic): every line is written, with its level.
 */
export function lineLogger(write: (line: string) => void): Logger {
  const at = (level: LogLevel) => (message: string) => write(`${level.toUpperCase()} ${message}`);
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}
