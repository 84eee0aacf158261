// A broker's registration, the ephemeral /brokers/ids/<id>, in Kafka's version 5 format:
//
// {"features":{"metadata.version":{"min_version":1,"max_version":7}},
//  "listener_security_protocol_map":{"CLIENT":"SASL_SSL","REPLICATION":"PLAINTEXT"},
//  "endpoints":["CLIENT://broker1:9093","REPLICATION://broker1:9094"],"rack":"dc1","jmx_port":-1,
//  "host":"broker1","port":9094,"timestamp":"1690000000000","version":5}
//
// host and port repeat the first PLAINTEXT endpoint for clients of Kafka 0.8 (null and -1 when there is none);
// rack is written only when set. Decoding accepts versions 1 to 5: version 1 has only host and port, and
// without a listener map each listener name is its own security protocol. The broker epoch is not in the
// JSON: Kafka takes the node's czxid.

import type { BrokerId } from '../../common/ids.js';
import { type Decoded, decodeJson, encodeJson, type JsonObject } from './json.js';

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
const SECURITY_PROTOCOLS: readonly string[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

export interface BrokerEndpoint {
  readonly listenerName: string;
  readonly securityProtocol: SecurityProtocol;
  /** Empty when the listener binds every interface; IPv6 addresses without brackets. */
  readonly host: string;
  readonly port: number;
}

export interface FeatureRange {
  readonly minVersion: number;
  readonly maxVersion: number;
}

export interface BrokerRegistration {
  readonly brokerId: BrokerId;
  readonly endpoints: readonly BrokerEndpoint[];
  readonly rack: string | null;
  readonly jmxPort: number;
  readonly timestampMs: number;
  readonly features: Readonly<Record<string, FeatureRange>>;
}

const PORT_RANGE = { min: 0, max: 65535 };

export function encodeBrokerRegistration(broker: BrokerRegistration): Uint8Array {
  const plaintext = broker.endpoints.find((e) => e.securityProtocol === 'PLAINTEXT');
  const features: Record<string, { min_version: number; max_version: number }> = {};
  for (const [name, range] of Object.entries(broker.features)) {
    features[name] = { min_version: range.minVersion, max_version: range.maxVersion };
  }
  const protocolMap: Record<string, string> = {};
  for (const e of broker.endpoints) protocolMap[e.listenerName] = e.securityProtocol;
  return encodeJson({
    features,
    listener_security_protocol_map: protocolMap,
    endpoints: broker.endpoints.map(endpointString),
    ...(broker.rack === null ? {} : { rack: broker.rack }),
    jmx_port: broker.jmxPort,
    host: plaintext?.host ?? null,
    port: plaintext?.port ?? -1,
    timestamp: String(broker.timestampMs),
    version: 5,
  });
}

/** Decodes the registration of the broker whose id is the node's name. */
export function decodeBrokerRegistration(brokerId: BrokerId, bytes: Uint8Array): Decoded<BrokerRegistration> {
  return decodeJson('broker registration', bytes, (json) => {
    const version = json.version([1, 2, 3, 4, 5]);
    const endpoints = version === 1 ? [legacyEndpoint(json)] : readEndpoints(json);
    return {
      brokerId,
      endpoints,
      rack: json.nullableString('rack'),
      jmxPort: json.intOr('jmx_port', -1, { min: -1, max: 65535 }),
      timestampMs: json.has('timestamp') ? json.integerString('timestamp') : -1,
      features: readFeatures(json),
    };
  });
}

export function endpointString(e: BrokerEndpoint): string {
  const host = e.host.includes(':') ? `[${e.host}]` : e.host;
  return `${e.listenerName}://${host}:${e.port}`;
}

function legacyEndpoint(json: JsonObject): BrokerEndpoint {
  return {
    listenerName: 'PLAINTEXT',
    securityProtocol: 'PLAINTEXT',
    host: json.string('host'),
    port: json.int('port', PORT_RANGE),
  };
}

function readEndpoints(json: JsonObject): BrokerEndpoint[] {
  const protocols = json.has('listener_security_protocol_map')
    ? json.stringMap('listener_security_protocol_map')
    : null;
  return json.stringArray('endpoints').map((text, i) => {
    const match = /^([A-Za-z0-9_-]+):\/\/(\[[0-9A-Fa-f:.%\w]*\]|[^:/[\]]*):(\d{1,5})$/.exec(text);
    if (match === null) json.fail(`endpoints[${i}]`, `is not LISTENER://host:port: ${text}`);
    const [, listenerName, rawHost, rawPort] = match as unknown as [string, string, string, string];
    const port = Number(rawPort);
    if (port > 65535) json.fail(`endpoints[${i}]`, `has port ${port}`);
    const protocol = protocols === null ? listenerName.toUpperCase() : protocols[listenerName];
    if (protocol === undefined || !SECURITY_PROTOCOLS.includes(protocol)) {
      json.fail(`endpoints[${i}]`, `has no known security protocol for listener ${listenerName}`);
    }
    const host = rawHost.startsWith('[') ? rawHost.slice(1, -1) : rawHost;
    return { listenerName, securityProtocol: protocol as SecurityProtocol, host, port };
  });
}

function readFeatures(json: JsonObject): Record<string, FeatureRange> {
  const features = json.objectOrEmpty('features');
  const out: Record<string, FeatureRange> = {};
  for (const name of features.keys()) {
    const range = features.object(name);
    const minVersion = range.int('min_version', { min: 0, max: 0x7fff });
    const maxVersion = range.int('max_version', { min: minVersion, max: 0x7fff });
    out[name] = { minVersion, maxVersion };
  }
  return out;
}
