// Dynamic configs and their change notifications, in Kafka's formats.
//
// /config/<type>/<name>   e.g. /config/topics/orders, /config/brokers/1, /config/brokers/<default>
//   {"version":1,"config":{"retention.ms":"86400000","cleanup.policy":"compact"}}   (values are strings)
// /config/changes/config_change_<10 digits>   persistent sequential, telling brokers which entity changed
//   {"version":2,"entity_path":"topics/orders"}
//   Version 1, from Kafka before 1.1, said {"version":1,"entity_type":"topics","entity_name":"orders"}.

import { type Decoded, decodeJson, encodeJson, LayoutDecodeError } from './json.js';

export function encodeEntityConfig(config: Readonly<Record<string, string>>): Uint8Array {
  return encodeJson({ version: 1, config });
}

/**
 * An entity config node read as Kafka reads it everywhere, with ConfigEntityZNode.decode (a broker applying it,
 * the controller's getLogConfigs, AdminZkClient's read-modify-write): data that is not a JSON object, or without a
 * "config" object, holds no configs (Json.parseBytes answers None, and the properties stay empty), and the version
 * is not looked at. A value that is not a string is the one refusal (its `to[String]` throws): the caller keeps
 * what it has rather than read a half-written document as configs removed.
 */
export function decodeEntityConfig(bytes: Uint8Array): Decoded<Record<string, string>> {
  const root = parsedObject(bytes);
  const config = root === null ? null : root.config;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return { ok: true, value: {} };
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(config as Record<string, unknown>)) {
    if (typeof value !== 'string') {
      const reason = `config.${key} is not a string: ${JSON.stringify(value)}`;
      return { ok: false, error: new LayoutDecodeError('entity config', reason) };
    }
    out[key] = value;
  }
  return { ok: true, value: out };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON object `bytes` hold, or null when they are not UTF-8 JSON or not an object (Jackson's parse error). */
function parsedObject(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const raw: unknown = JSON.parse(utf8.decode(bytes));
    return typeof raw === 'object' && raw !== null && !Array.isArray(raw)
      ? (raw as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
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
