// The Mirror connectors' loggers. Each part logs through the logger named after the Kafka class that writes the
// same lines (MIRROR_LOGGERS), taken from the worker through the connector's or task's context (PluginLoggers,
// Brook's stand-in for SLF4J's LoggerFactory), so that a level set with /admin/loggers, on the root or on
// `org.apache.kafka.connect.mirror.MirrorSourceTask` say, filters them as it filters Kafka's MirrorMaker lines.
// One process runs many flows, so every line starts with its flow (`[A->B]`).

import { createLogger, type LogFields, type Logger } from '../../common/logger.js';
import type { PluginLoggers } from '../api/connector.js';

/** The Kafka classes whose loggers write the Mirror connectors' lines. */
export const MIRROR_LOGGERS = {
  sourceConnector: 'org.apache.kafka.connect.mirror.MirrorSourceConnector',
  sourceTask: 'org.apache.kafka.connect.mirror.MirrorSourceTask',
  checkpointConnector: 'org.apache.kafka.connect.mirror.MirrorCheckpointConnector',
  checkpointTask: 'org.apache.kafka.connect.mirror.MirrorCheckpointTask',
  /** The checkpoints a checkpoint task loads at start (checkpoint-store.ts). */
  checkpointStore: 'org.apache.kafka.connect.mirror.CheckpointStore',
  /** The offset syncs a checkpoint task reads (offset-syncs.ts). */
  offsetSyncStore: 'org.apache.kafka.connect.mirror.OffsetSyncStore',
  /** The creation of the internal topics (Kafka's MirrorUtils.createCompactedTopic). */
  utils: 'org.apache.kafka.connect.mirror.MirrorUtils',
} as const;

/**
 * The logger `name` of the worker running the connector (a host without loggers: one writing to stderr at the
 * process's level), its lines prefixed with the flow.
 */
export function mirrorLogger(context: PluginLoggers | undefined, name: string, flow: string): Logger {
  return withFlow(context?.logger?.(name) ?? createLogger(name), `[${flow}] `);
}

function withFlow(base: Logger, prefix: string): Logger {
  return {
    trace: (message: string, fields?: LogFields) => base.trace(prefix + message, fields),
    debug: (message: string, fields?: LogFields) => base.debug(prefix + message, fields),
    info: (message: string, fields?: LogFields) => base.info(prefix + message, fields),
    warn: (message: string, fields?: LogFields) => base.warn(prefix + message, fields),
    error: (message: string, fields?: LogFields) => base.error(prefix + message, fields),
    child: (component: string) => withFlow(base.child(component), prefix),
    enabled: (level) => base.enabled(level),
  };
}
