// The worker's configuration with Kafka Connect's keys and defaults (WorkerConfig, StandaloneConfig,
// DistributedConfig). Standalone needs offset.storage.file.filename; distributed needs group.id and the three
// storage topics. `producer.` and `consumer.` prefixed keys reach the clients of tasks where Brook's client has
// the setting; `key.converter.`/`value.converter.` prefixed keys reach the converters.

import { ConfigDef, oneOf, type ParsedConfig, range } from '../api/config-def.js';
import { ConfigException } from '../errors.js';
import { checkWorkerClientSecurity, OVERRIDE_POLICY_NAMES } from './client-configs.js';
import { ConfigTransformer } from './config-providers.js';
import { supportedAlgorithm } from './distributed/request-signature.js';
import { type CorsPolicy, corsPolicy } from './rest-cors.js';
import {
  type ResponseHeaderRule,
  responseHeaderRules,
  responseHeadersValidator,
} from './rest-response-headers.js';
import { type RestTls, restTls } from './rest-tls.js';

const COMMON = 'Common';

export function workerConfigDef(mode: 'standalone' | 'distributed'): ConfigDef {
  const def = new ConfigDef()
    .define({
      name: 'bootstrap.servers',
      type: 'LIST',
      defaultValue: 'localhost:9092',
      importance: 'HIGH',
      documentation: 'Kafka brokers to connect to.',
      group: COMMON,
    })
    .define({
      name: 'key.converter',
      type: 'CLASS',
      defaultValue: 'org.apache.kafka.connect.json.JsonConverter',
      importance: 'HIGH',
      documentation: 'Converter of record keys.',
      group: COMMON,
    })
    .define({
      name: 'value.converter',
      type: 'CLASS',
      defaultValue: 'org.apache.kafka.connect.json.JsonConverter',
      importance: 'HIGH',
      documentation: 'Converter of record values.',
      group: COMMON,
    })
    .define({
      name: 'header.converter',
      type: 'CLASS',
      defaultValue: 'org.apache.kafka.connect.storage.SimpleHeaderConverter',
      importance: 'LOW',
      documentation: 'Converter of record headers.',
      group: COMMON,
    })
    .define({
      name: 'offset.flush.interval.ms',
      type: 'LONG',
      defaultValue: 60_000,
      validator: range(0),
      importance: 'LOW',
      documentation: 'How often tasks commit offsets.',
      group: COMMON,
    })
    .define({
      name: 'offset.flush.timeout.ms',
      type: 'LONG',
      defaultValue: 5_000,
      validator: range(0),
      importance: 'LOW',
      documentation: 'How long an offset commit may wait for records to be written.',
      group: COMMON,
    })
    .define({
      name: 'task.shutdown.graceful.timeout.ms',
      type: 'LONG',
      defaultValue: 5_000,
      validator: range(0),
      importance: 'LOW',
      documentation: 'How long stopping tasks may take.',
      group: COMMON,
    })
    .define({
      name: 'listeners',
      type: 'LIST',
      defaultValue: null,
      importance: 'LOW',
      documentation: 'REST listeners, e.g. http://:8083.',
      group: COMMON,
    })
    .define({
      name: 'rest.host.name',
      type: 'STRING',
      defaultValue: null,
      importance: 'LOW',
      documentation: 'Deprecated: REST host (use listeners).',
      group: COMMON,
    })
    .define({
      name: 'rest.port',
      type: 'INT',
      defaultValue: 8083,
      validator: range(0, 65535),
      importance: 'LOW',
      documentation: 'Deprecated: REST port (use listeners).',
      group: COMMON,
    })
    .define({
      name: 'rest.advertised.host.name',
      type: 'STRING',
      defaultValue: null,
      importance: 'LOW',
      documentation: 'Host name given to other workers.',
      group: COMMON,
    })
    .define({
      name: 'rest.advertised.port',
      type: 'INT',
      defaultValue: null,
      importance: 'LOW',
      documentation: 'Port given to other workers.',
      group: COMMON,
    })
    .define({
      name: 'access.control.allow.origin',
      type: 'STRING',
      defaultValue: '',
      importance: 'LOW',
      documentation:
        "The origins (or '*') whose browser pages may call the REST API (Access-Control-Allow-Origin); blank: only the API's own.",
      group: COMMON,
    })
    .define({
      name: 'access.control.allow.methods',
      type: 'STRING',
      defaultValue: '',
      importance: 'LOW',
      documentation:
        'The methods cross-origin requests may use (Access-Control-Allow-Methods); blank: GET, POST and HEAD.',
      group: COMMON,
    })
    .define({
      name: 'response.http.headers.config',
      type: 'STRING',
      defaultValue: '',
      validator: responseHeadersValidator,
      importance: 'LOW',
      documentation: 'Rules for REST API HTTP response headers',
      group: COMMON,
    })
    .define({
      name: 'topic.tracking.enable',
      type: 'BOOLEAN',
      defaultValue: true,
      importance: 'LOW',
      documentation: 'Whether tasks record the topics each connector uses (GET /connectors/{name}/topics).',
      group: COMMON,
    })
    .define({
      name: 'topic.tracking.allow.reset',
      type: 'BOOLEAN',
      defaultValue: true,
      importance: 'LOW',
      documentation: 'Whether PUT /connectors/{name}/topics/reset may clear the topics a connector used.',
      group: COMMON,
    })
    .define({
      name: 'plugin.path',
      type: 'LIST',
      defaultValue: null,
      importance: 'LOW',
      documentation: 'Folders of connector packages.',
      group: COMMON,
    })
    .define({
      name: 'client.id',
      type: 'STRING',
      defaultValue: '',
      importance: 'LOW',
      documentation: 'Client id prefix.',
      group: COMMON,
    })
    .define({
      name: 'connector.client.config.override.policy',
      type: 'STRING',
      defaultValue: 'All',
      validator: oneOf(OVERRIDE_POLICY_NAMES),
      importance: 'MEDIUM',
      documentation:
        'Which producer.override./consumer.override./admin.override. keys a connector may set: All, Principal (sasl.jaas.config, sasl.mechanism, security.protocol) or None.',
      group: COMMON,
    })
    .define({
      name: 'exactly.once.source.support',
      type: 'STRING',
      defaultValue: 'disabled',
      validator: oneOf(['disabled', 'preparing', 'enabled'], true),
      importance: 'HIGH',
      documentation:
        "Whether to enable exactly-once support for source connectors in the cluster by using transactions to write source records and their source offsets, and by proactively fencing out old task generations before bringing up new ones. 'preparing' reads offsets read_committed without running tasks transactionally (a rolling upgrade's first step).",
      group: COMMON,
    });
  if (mode === 'standalone') {
    def.define({
      name: 'offset.storage.file.filename',
      type: 'STRING',
      importance: 'HIGH',
      documentation: 'File of source offsets.',
      group: COMMON,
    });
  } else {
    def
      .define({
        name: 'group.id',
        type: 'STRING',
        importance: 'HIGH',
        documentation: 'The Connect cluster.',
        group: COMMON,
      })
      .define({
        name: 'config.storage.topic',
        type: 'STRING',
        importance: 'HIGH',
        documentation: 'Topic of connector configs.',
        group: COMMON,
      })
      .define({
        name: 'offset.storage.topic',
        type: 'STRING',
        importance: 'HIGH',
        documentation: 'Topic of source offsets.',
        group: COMMON,
      })
      .define({
        name: 'status.storage.topic',
        type: 'STRING',
        importance: 'HIGH',
        documentation: 'Topic of statuses.',
        group: COMMON,
      })
      .define({
        name: 'config.storage.replication.factor',
        type: 'SHORT',
        defaultValue: 3,
        importance: 'LOW',
        documentation: 'Replication factor of the config topic (-1: the broker default).',
        group: COMMON,
      })
      .define({
        name: 'offset.storage.replication.factor',
        type: 'SHORT',
        defaultValue: 3,
        importance: 'LOW',
        documentation: 'Replication factor of the offset topic.',
        group: COMMON,
      })
      .define({
        name: 'offset.storage.partitions',
        type: 'INT',
        defaultValue: 25,
        importance: 'LOW',
        documentation: 'Partitions of the offset topic.',
        group: COMMON,
      })
      .define({
        name: 'status.storage.replication.factor',
        type: 'SHORT',
        defaultValue: 3,
        importance: 'LOW',
        documentation: 'Replication factor of the status topic.',
        group: COMMON,
      })
      .define({
        name: 'status.storage.partitions',
        type: 'INT',
        defaultValue: 5,
        importance: 'LOW',
        documentation: 'Partitions of the status topic.',
        group: COMMON,
      })
      .define({
        name: 'inter.worker.key.generation.algorithm',
        type: 'STRING',
        defaultValue: 'HmacSHA256',
        importance: 'LOW',
        documentation: 'The algorithm to use for generating internal request keys.',
        group: COMMON,
      })
      .define({
        name: 'inter.worker.key.size',
        type: 'INT',
        defaultValue: null,
        importance: 'MEDIUM',
        documentation:
          'The size of the key to use for signing internal requests, in bits. If null, the default key size for the key generation algorithm will be used.',
        group: COMMON,
      })
      .define({
        name: 'inter.worker.key.ttl.ms',
        type: 'INT',
        defaultValue: 3_600_000,
        validator: range(0, 2_147_483_647),
        importance: 'LOW',
        documentation:
          'The TTL of generated session keys used for internal request validation (in milliseconds)',
        group: COMMON,
      })
      .define({
        name: 'inter.worker.signature.algorithm',
        type: 'STRING',
        defaultValue: 'HmacSHA256',
        importance: 'LOW',
        documentation: 'The algorithm used to sign internal requests.',
        group: COMMON,
      })
      .define({
        name: 'inter.worker.verification.algorithms',
        type: 'LIST',
        defaultValue: 'HmacSHA256',
        importance: 'LOW',
        documentation:
          'A list of permitted algorithms for verifying internal requests, which must include the algorithm used for the inter.worker.signature.algorithm property.',
        group: COMMON,
      })
      .define({
        name: 'worker.sync.timeout.ms',
        type: 'INT',
        defaultValue: 3_000,
        importance: 'MEDIUM',
        documentation:
          'How long a worker out of sync with the others waits to catch up on the config topic; also part of the bound on stopping the worker.',
        group: COMMON,
      })
      .define({
        name: 'scheduled.rebalance.max.delay.ms',
        type: 'INT',
        defaultValue: 300_000,
        validator: range(0),
        importance: 'LOW',
        documentation: "How long a departed worker's tasks wait before they are reassigned (KIP-415).",
        group: COMMON,
      })
      .define({
        name: 'session.timeout.ms',
        type: 'INT',
        defaultValue: 10_000,
        validator: range(1),
        importance: 'HIGH',
        documentation: 'How long a worker may go without heartbeats before the group drops it.',
        group: COMMON,
      })
      .define({
        name: 'heartbeat.interval.ms',
        type: 'INT',
        defaultValue: 3_000,
        validator: range(1),
        importance: 'HIGH',
        documentation: 'How often a worker heartbeats to the group coordinator.',
        group: COMMON,
      })
      .define({
        name: 'rebalance.timeout.ms',
        type: 'INT',
        defaultValue: 60_000,
        validator: range(1),
        importance: 'HIGH',
        documentation: 'How long workers may take to rejoin the group in a rebalance.',
        group: COMMON,
      })
      .define({
        name: 'connect.protocol',
        type: 'STRING',
        defaultValue: 'sessioned',
        validator: oneOf(['eager', 'compatible', 'sessioned']),
        importance: 'LOW',
        documentation: 'Group sub-protocol.',
        group: COMMON,
      });
  }
  return def;
}

export interface WorkerConfig {
  /** The worker's keys, config provider variables resolved (KIP-421). */
  readonly raw: Readonly<Record<string, string>>;
  /** The worker's config providers (`config.providers`): they resolve connector configs when they start. */
  readonly transformer: ConfigTransformer;
  readonly parsed: ParsedConfig;
  readonly bootstrapServers: string;
  /** Where the REST server listens. */
  readonly restHost: string;
  readonly restPort: number;
  /** The REST listener's TLS (`listeners=https://...`), else null. */
  readonly restTls: RestTls | null;
}

/**
 * `tlsRaw` holds the keys the https listener's TLS is read from (`listeners.https.ssl.*`, `ssl.*`): the worker's
 * own by default; MirrorMaker's dedicated mode passes its file's top level, as Kafka builds its REST server from it.
 */
export function loadWorkerConfig(
  raw: Record<string, string>,
  mode: 'standalone' | 'distributed',
  tlsRaw: Readonly<Record<string, string>> = raw,
): WorkerConfig {
  const transformer = ConfigTransformer.fromConfig(raw);
  const given = raw;
  raw = transformer.transform(raw);
  const parsed = workerConfigDef(mode).parse(raw);
  if (mode === 'distributed') checkInterWorkerKeys(parsed);
  checkWorkerClientSecurity(raw);
  const { host, port, https } = restListener(parsed);
  return {
    raw,
    transformer,
    parsed,
    bootstrapServers: (parsed['bootstrap.servers'] as string[]).join(','),
    restHost: host,
    restPort: port,
    restTls: https ? restTls(tlsRaw === given ? raw : transformer.transform(tlsRaw)) : null,
  };
}

/** The session key and signature settings (request-signature.ts knows the algorithms). */
function checkInterWorkerKeys(parsed: ParsedConfig): void {
  const keyAlgorithm = parsed['inter.worker.key.generation.algorithm'] as string;
  if (!supportedAlgorithm(keyAlgorithm))
    throw ConfigException.invalid(
      'inter.worker.key.generation.algorithm',
      keyAlgorithm,
      `${keyAlgorithm} KeyGenerator not available`,
    );
  const size = parsed['inter.worker.key.size'] as number | null;
  if (size !== null && (size < 8 || size % 8 !== 0))
    throw ConfigException.invalid(
      'inter.worker.key.size',
      size,
      'Key size must be a positive multiple of 8 bits',
    );
  const verification = parsed['inter.worker.verification.algorithms'] as string[];
  if (verification.length === 0)
    throw ConfigException.invalid(
      'inter.worker.verification.algorithms',
      '',
      'At least one signature verification algorithm must be provided',
    );
  for (const a of verification)
    if (!supportedAlgorithm(a))
      throw ConfigException.invalid(
        'inter.worker.verification.algorithms',
        verification.join(','),
        `${a} Mac not available`,
      );
  const signature = parsed['inter.worker.signature.algorithm'] as string;
  if (!supportedAlgorithm(signature))
    throw ConfigException.invalid(
      'inter.worker.signature.algorithm',
      signature,
      `${signature} Mac not available`,
    );
  if (!verification.includes(signature))
    throw ConfigException.invalid(
      'inter.worker.verification.algorithms',
      verification.join(','),
      `Signature algorithm '${signature}' must be present in verification algorithms list`,
    );
}

/** listeners (the first one) wins over the deprecated rest.host.name/rest.port. */
function restListener(parsed: ParsedConfig): { host: string; port: number; https: boolean } {
  const listeners = parsed.listeners as string[] | null;
  if (listeners !== null && listeners.length > 0) {
    const m = /^(https?):\/\/(\[[^\]]*\]|[^:/]*):(\d+)$/.exec(listeners[0]!);
    if (m === null || Number(m[3]) > 65535) {
      throw ConfigException.invalid(
        'listeners',
        listeners.join(','),
        'expected a listener like http://host:8083',
      );
    }
    return { host: m[2]!.replace(/^\[|\]$/g, ''), port: Number(m[3]), https: m[1] === 'https' };
  }
  return {
    host: (parsed['rest.host.name'] as string | null) ?? '',
    port: parsed['rest.port'] as number,
    https: false,
  };
}

/** The REST API's topic tracking switches: the worker's topic.tracking.enable and topic.tracking.allow.reset. */
export function topicTrackingOf(config: WorkerConfig): { enabled: boolean; allowReset: boolean } {
  return {
    enabled: config.parsed['topic.tracking.enable'] === true,
    allowReset: config.parsed['topic.tracking.allow.reset'] === true,
  };
}

/** The REST API's cross-origin policy: the worker's access.control.allow.origin and access.control.allow.methods. */
export function corsPolicyOf(config: WorkerConfig): CorsPolicy | null {
  return corsPolicy(
    config.parsed['access.control.allow.origin'] as string,
    config.parsed['access.control.allow.methods'] as string,
  );
}

/** The headers every REST answer gets: the worker's response.http.headers.config (validated when loaded). */
export function responseHeadersOf(config: WorkerConfig): ResponseHeaderRule[] {
  return responseHeaderRules(config.parsed['response.http.headers.config'] as string);
}
