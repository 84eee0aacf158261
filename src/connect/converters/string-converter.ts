// StringConverter (org.apache.kafka.connect.storage.StringConverter): a value's text in UTF-8; bytes read back
// as an optional string. converter.encoding is honoured for the encodings Node knows.

import type { ConfigDef } from '../api/config-def.js';
import { Schemas } from '../data/schema.js';
import { Struct } from '../data/struct.js';
import { ConfigException } from '../errors.js';
import type { Converter, SchemaAndValue } from './converter.js';
import { stringConverterConfigDef } from './converter-configs.js';

const ENCODINGS: Record<string, BufferEncoding> = {
  'UTF-8': 'utf8',
  UTF8: 'utf8',
  'UTF-16LE': 'utf16le',
  'ISO-8859-1': 'latin1',
  'US-ASCII': 'ascii',
};

export class StringConverter implements Converter {
  private encoding: BufferEncoding = 'utf8';

  config(): ConfigDef {
    return stringConverterConfigDef();
  }

  configure(configs: Readonly<Record<string, string>>, _isKey?: boolean): void {
    const name = configs['converter.encoding'];
    if (name === undefined) return;
    const encoding = ENCODINGS[name.toUpperCase()];
    if (encoding === undefined)
      throw ConfigException.invalid('converter.encoding', name, 'unsupported encoding');
    this.encoding = encoding;
  }

  fromConnectData(_topic: string, _schema: unknown, value: unknown): Buffer | null {
    if (value === null || value === undefined) return null;
    if (Buffer.isBuffer(value)) return Buffer.from(value.toString(this.encoding), this.encoding);
    const text =
      value instanceof Struct
        ? value.toString()
        : value instanceof Date
          ? value.toISOString()
          : String(value);
    return Buffer.from(text, this.encoding);
  }

  toConnectData(_topic: string, value: Buffer | null): SchemaAndValue {
    return { schema: Schemas.OPTIONAL_STRING, value: value === null ? null : value.toString(this.encoding) };
  }
}
