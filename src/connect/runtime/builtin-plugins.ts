// The plugins every Brook worker has, under Kafka's class names: the converters, the FileStream example
// connectors, the PostgreSQL connectors (also under the JDBC connectors' names).

import type { Logger } from '../../common/logger.js';
import { ConfigDef } from '../api/config-def.js';
import { FileStreamSinkConnector } from '../connectors/file-stream-sink.js';
import { FileStreamSourceConnector } from '../connectors/file-stream-source.js';
import { PostgresCdcSourceConnector } from '../connectors/postgres/cdc-source.js';
import { PostgresSinkConnector } from '../connectors/postgres/sink-connector.js';
import { PostgresSourceConnector } from '../connectors/postgres/source-connector.js';
import { ByteArrayConverter } from '../converters/byte-array-converter.js';
import { JsonConverter } from '../converters/json-converter.js';
import { StringConverter } from '../converters/string-converter.js';
import { ConfigException } from '../errors.js';
import { MirrorCheckpointConnector } from '../mirror/checkpoint-connector.js';
import { MirrorHeartbeatConnector } from '../mirror/heartbeat-connector.js';
import { MirrorSourceConnector } from '../mirror/source-connector.js';
import { registerTransforms } from '../transforms/index.js';
import { BROOK_CONNECT_VERSION } from '../version.js';
import { Plugins } from './plugins.js';
import type { WorkerConfig } from './worker-config.js';

/** Header conversion is fixed (headers.ts); the class is listed so that configs naming it are accepted. */
export class SimpleHeaderConverter {
  /** Kafka's SimpleHeaderConverter defines no keys. */
  config(): ConfigDef {
    return new ConfigDef();
  }

  configure(): void {}
}

export function builtinPlugins(): Plugins {
  const p = new Plugins();
  const version = BROOK_CONNECT_VERSION;
  p.register({
    className: FileStreamSourceConnector.className,
    type: 'source',
    version,
    ctor: FileStreamSourceConnector,
  });
  p.register({
    className: FileStreamSinkConnector.className,
    type: 'sink',
    version,
    ctor: FileStreamSinkConnector,
  });
  // The JDBC connectors' class names are aliases too, so that their configs for PostgreSQL work as they are.
  p.register(
    { className: PostgresSourceConnector.className, type: 'source', version, ctor: PostgresSourceConnector },
    ['io.confluent.connect.jdbc.JdbcSourceConnector', 'JdbcSourceConnector', 'JdbcSource'],
  );
  p.register(
    { className: PostgresSinkConnector.className, type: 'sink', version, ctor: PostgresSinkConnector },
    ['io.confluent.connect.jdbc.JdbcSinkConnector', 'JdbcSinkConnector', 'JdbcSink'],
  );
  p.register({
    className: 'org.apache.kafka.connect.json.JsonConverter',
    type: 'converter',
    version,
    ctor: JsonConverter,
  });
  p.register({
    className: 'org.apache.kafka.connect.storage.StringConverter',
    type: 'converter',
    version,
    ctor: StringConverter,
  });
  p.register({
    className: 'org.apache.kafka.connect.converters.ByteArrayConverter',
    type: 'converter',
    version,
    ctor: ByteArrayConverter,
  });
  p.register({
    className: 'org.apache.kafka.connect.storage.SimpleHeaderConverter',
    type: 'header_converter',
    version,
    ctor: SimpleHeaderConverter,
  });
  p.register({
    className: PostgresCdcSourceConnector.className,
    type: 'source',
    version,
    ctor: PostgresCdcSourceConnector,
  });
  // MirrorMaker 2's connectors, under Kafka's class names (src/connect/mirror).
  for (const ctor of [MirrorSourceConnector, MirrorCheckpointConnector, MirrorHeartbeatConnector]) {
    p.register({ className: ctor.className, type: 'source', version, ctor });
  }
  registerTransforms(p, version);
  return p;
}

/**
 * A worker's plugins: the built-in ones and those found under the worker's plugin.path (standalone and distributed
 * workers alike). A plugin.path that cannot be loaded is the worker's config error, naming the key.
 */
export async function workerPlugins(config: WorkerConfig, log: Logger): Promise<Plugins> {
  const plugins = builtinPlugins();
  const pluginPath = config.parsed['plugin.path'] as string[] | null;
  if (pluginPath !== null && pluginPath.length > 0) {
    try {
      const found = await plugins.loadPluginPath(pluginPath);
      log.info(`Loaded plugins from plugin.path: ${found.join(', ') || '(none)'}`);
    } catch (err) {
      throw ConfigException.invalid('plugin.path', pluginPath.join(','), (err as Error).message);
    }
  }
  return plugins;
}
