// The config definitions Kafka's converters answer from config() (ConverterConfig, StringConverterConfig,
// JsonConverterConfig), which GET /connector-plugins/{converter}/config lists. Keys without a group have
// order -1 there, as Kafka's ConfigDef gives a key defined without one.

import { ConfigDef, oneOf } from '../api/config-def.js';

/** Kafka's ConverterConfig.newConfigDef(): the converter.type a worker sets to key, value or header. */
export function converterConfigDef(): ConfigDef {
  return new ConfigDef().define({
    name: 'converter.type',
    type: 'STRING',
    validator: oneOf(['key', 'value', 'header']),
    importance: 'LOW',
    documentation: 'How this converter will be used.',
    orderInGroup: -1,
  });
}

export function stringConverterConfigDef(): ConfigDef {
  return converterConfigDef().define({
    name: 'converter.encoding',
    type: 'STRING',
    defaultValue: 'UTF-8',
    importance: 'HIGH',
    documentation: 'The name of the Java character set to use for encoding strings as byte arrays.',
    orderInGroup: -1,
    width: 'MEDIUM',
    displayName: 'Encoding',
  });
}

export function jsonConverterConfigDef(): ConfigDef {
  return converterConfigDef()
    .define({
      name: 'schemas.enable',
      type: 'BOOLEAN',
      defaultValue: true,
      importance: 'HIGH',
      documentation: 'Include schemas within each of the serialized values and keys.',
      group: 'Schemas',
      orderInGroup: 0,
      width: 'MEDIUM',
      displayName: 'Enable Schemas',
    })
    .define({
      name: 'schemas.cache.size',
      type: 'INT',
      defaultValue: 1000,
      importance: 'HIGH',
      documentation: 'The maximum number of schemas that can be cached in this converter instance.',
      group: 'Schemas',
      orderInGroup: 1,
      width: 'MEDIUM',
      displayName: 'Schema Cache Size',
    })
    .define({
      name: 'decimal.format',
      type: 'STRING',
      defaultValue: 'BASE64',
      validator: oneOf(['BASE64', 'NUMERIC'], true),
      importance: 'LOW',
      documentation:
        "Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
      group: 'Serialization',
      orderInGroup: 0,
      width: 'MEDIUM',
      displayName: 'Decimal Format',
    })
    .define({
      name: 'replace.null.with.default',
      type: 'BOOLEAN',
      defaultValue: true,
      importance: 'LOW',
      documentation:
        'Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.',
      group: 'Serialization',
      orderInGroup: 1,
      width: 'MEDIUM',
      displayName: 'Replace null with default',
    });
}
