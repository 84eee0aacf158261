// Dynamic configs and their change notifications, in Kafka's formats.
//
// /config/<type>/<name>   e.g. /config/topics/orders, /config/brokers/1, /config/brokers/<default>
//   {"version":1,"config":{"retention.ms":"86400000","cleanup.policy":"compact"}}   (values are strings)
// /config/changes/config_change_<10 digits>   persistent sequential, telling brokers which entity changed
//   {"version":2,"entity_path":"topics/orders"}
//   Version 1, from Kafka before 1.1, said {"version":1,"entity_type":"topics","entity_name":"orders"}.

import { type Decoded, decodeJson, encodeJson } from './json.js';

export function encodeEntityConfig(config: Readonly<Record<string, string>>): Uint8Array {
  return encodeJson({ version: 1, config });
}

export function decodeEntityConfig(bytes: Uint8Array): Decoded<Record<string, string>> {
  return decodeJson('entity config', bytes, (json) => {
    json.version([1]);
    return json.has('config') ? json.stringMap('config') : {};
  });
}

export interface ConfigChangeNotification {
  /** "<entity type>/<entity name>", e.g. "topics/orders" or "brokers/<default>". */
  readonly entityPath: string;
}

export function encodeConfigChange(change: ConfigChangeNotification): Uint8Array {
  return encodeJson({ version: 2, entity_path: change.entityPath });
}

export function decodeConfigChange(bytes: Uint8Array): Decoded<ConfigChangeNotification> {
  return decodeJson('config change notification', bytes, (json) => {
    const version = json.version([1, 2]);
    const entityPath =
      version === 1
        ? `${json.string('entity_type')}/${json.string('entity_name')}`
        : json.string('entity_path');
    if (!/^[^/]+\/.+$/.test(entityPath)) json.fail('entity_path', `is not <type>/<name>: ${entityPath}`);
    return { entityPath };
  });
}
