// The plugins every Brook worker has, under Kafka's class names: the converters, the FileStream example
// connectors, and (registered by their own modules) the PostgreSQL connectors and the transforms.

import { FileStreamSinkConnector } from '../connectors/file-stream-sink.js';
import { FileStreamSourceConnector } from '../connectors/file-stream-source.js';
import { ByteArrayConverter } from '../converters/byte-array-converter.js';
import { JsonConverter } from '../converters/json-converter.js';
import { StringConverter } from '../converters/string-converter.js';
import { BROOK_CONNECT_VERSION } from '../version.js';
import { Plugins } from './plugins.js';

/** Header conversion is fixed (headers.ts); the class is listed so that configs naming it are accepted. */
export class SimpleHeaderConverter {
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
  return p;
}
