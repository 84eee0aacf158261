// ByteArrayConverter (org.apache.kafka.connect.converters.ByteArrayConverter): the record's bytes as they are,
// with an optional bytes schema. Anything but bytes (or a schema of another type) is refused with Kafka's message.

import type { ConfigDef } from '../api/config-def.js';
import type { Schema } from '../data/schema.js';
import { Schemas } from '../data/schema.js';
import { DataException } from '../errors.js';
import type { Converter, SchemaAndValue } from './converter.js';
import { converterConfigDef } from './converter-configs.js';

export class ByteArrayConverter implements Converter {
  config(): ConfigDef {
    return converterConfigDef();
  }

  configure(_configs?: Readonly<Record<string, string>>, _isKey?: boolean): void {}

  fromConnectData(_topic: string, schema: Schema | null, value: unknown): Buffer | null {
    if (schema !== null && schema.type !== 'bytes') {
      throw new DataException(`Invalid schema type for ByteArrayConverter: ${schema.type.toUpperCase()}`);
    }
    if (value === null || value === undefined) return null;
    if (!Buffer.isBuffer(value)) {
      throw new DataException(`ByteArrayConverter is not compatible with objects of type ${typeof value}`);
    }
    return value;
  }

  toConnectData(_topic: string, value: Buffer | null): SchemaAndValue {
    return { schema: Schemas.OPTIONAL_BYTES, value };
  }
}
