// `brook configs`: Kafka's kafka-configs.sh for topics and brokers. --describe prints the dynamic configs (or
// every config with --all) as Kafka does; --alter applies --add-config and --delete-config with
// IncrementalAlterConfigs, so configs not named are left alone.

import { BROKER_KEYS } from '../broker/config/broker-keys.js';
import { TOPIC_KEYS } from '../broker/config/topic-keys.js';
import { Admin, type ConfigResourceType } from '../client/admin.js';
import { type ParsedArgs, splitTopLevel, UsageError } from './args.js';
import { clientQuotas, isQuotaEntityType, type QuotaEntityArgs, quotaEntityArgs } from './client-quotas.js';
import { clientOptions, err, newClient, out, runTool, type Tool } from './client-tool.js';

const tool: Tool = {
  name: 'configs',
  summary: 'Describe or change the configs of a topic or a broker.',
  specs: {
    describe: { help: 'List configs for the given entity.' },
    alter: { help: 'Alter the configuration for the entity.' },
    'entity-type': {
      value: true,
      repeat: true,
      help: 'topics, brokers, users, clients or ips (users and clients: quotas; users: SCRAM credentials too; ips: connection_creation_rate).',
    },
    'entity-name': {
      value: true,
      repeat: true,
      help: 'Name of the entity (topic name, broker id, user principal, client id or IP address).',
    },
    'entity-default': { help: 'The default entity of the type (brokers, users, clients, ips).' },
    user: { value: true, help: 'The user principal (same as --entity-type users --entity-name).' },
    client: { value: true, help: 'The client id (same as --entity-type clients --entity-name).' },
    'user-defaults': { help: 'The default user principal (quotas).' },
    'client-defaults': { help: 'The default client id (quotas).' },
    topic: { value: true, help: 'The topic name (same as --entity-type topics --entity-name).' },
    broker: { value: true, help: 'The broker id (same as --entity-type brokers --entity-name).' },
    'broker-defaults': { help: 'The cluster-wide broker defaults.' },
    'add-config': { value: true, help: addConfigHelp() },
    'delete-config': { value: true, help: "Config keys to remove: 'k1,k2'." },
    all: { help: 'With --describe, list every config, not only the dynamic ones.' },
  },
  run: (parsed) => run(parsed, quotaEntityArgs([])),
};

/**
 * The --add-config help with the valid config names of each entity type, as kafka-configs lists them: every topic
 * key, the broker keys that can change without a restart, the quota keys (and SCRAM mechanisms for users).
 */
export function addConfigHelp(): string {
  const quotas = [
    'consumer_byte_rate',
    'controller_mutation_rate',
    'producer_byte_rate',
    'request_percentage',
  ];
  const dynamicBrokerKeys = [...BROKER_KEYS.values()].filter((k) => k.updateMode !== 'read-only');
  const byType: [string, string[]][] = [
    ['topics', [...TOPIC_KEYS.keys()]],
    ['brokers', dynamicBrokerKeys.map((k) => k.name)],
    ['users', [...quotas, 'SCRAM-SHA-256', 'SCRAM-SHA-512']],
    ['clients', quotas],
    ['ips', ['connection_creation_rate']],
  ];
  const lines = [
    "Configs to add or change: 'k1=v1,k2=[v1,v2,v2],k3=v3'. Valid configs:",
    ...byType.map(([type, names]) => `For entity-type '${type}': ${[...names].sort().join(' ')}`),
  ];
  // Lines after the first start at the description column of the usage table.
  return lines.join(`\n${' '.repeat(41)}`);
}

export function runConfigs(args: string[]): Promise<number> {
  // Quota entities pair types with names in command-line order, which the parsed options do not keep.
  const quotaEntities = quotaEntityArgs(args);
  return runTool({ ...tool, run: (parsed) => run(parsed, quotaEntities) }, args);
}

const TYPES: Record<string, ConfigResourceType> = {
  topics: 'topic',
  brokers: 'broker',
  'broker-loggers': 'broker-logger',
};
const LABEL: Record<ConfigResourceType, string> = {
  topic: 'topic',
  broker: 'broker',
  'broker-logger': 'broker-logger',
  'client-metrics': 'client-metric',
  group: 'group',
};

function entity(args: ParsedArgs): { type: ConfigResourceType; name: string; defaults: boolean } {
  if (args.has('topic')) return { type: 'topic', name: args.get('topic')!, defaults: false };
  if (args.has('broker')) return { type: 'broker', name: args.get('broker')!, defaults: false };
  if (args.has('broker-defaults')) return { type: 'broker', name: '', defaults: true };
  const typeName = args.get('entity-type');
  if (typeName === undefined) throw new UsageError('--entity-type (or --topic / --broker) is required');
  const type = TYPES[typeName];
  if (type === undefined)
    throw new UsageError(`unsupported entity type '${typeName}' (topics, brokers, broker-loggers)`);
  if (args.has('entity-default')) return { type, name: '', defaults: true };
  return { type, name: args.get('entity-name') ?? '', defaults: false };
}

async function run(args: ParsedArgs, quotaEntities: QuotaEntityArgs): Promise<number> {
  if (args.has('describe') === args.has('alter'))
    throw new UsageError('Command must include exactly one action: --describe, --alter');
  if (isQuotaEntityType(quotaEntities.types[0])) {
    const admin = newClient(() => new Admin(clientOptions(args)));
    try {
      return await clientQuotas(admin, args, quotaEntities);
    } finally {
      await admin.close();
    }
  }
  const e = entity(args);
  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    return args.has('describe') ? await describe(admin, args, e) : await alter(admin, args, e);
  } finally {
    await admin.close();
  }
}

async function describe(
  admin: Admin,
  args: ParsedArgs,
  e: { type: ConfigResourceType; name: string; defaults: boolean },
): Promise<number> {
  let names = [e.name];
  if (e.name === '' && !e.defaults) {
    if (e.type === 'topic') names = await admin.listTopics();
    else names = (await admin.describeCluster()).brokers.map((b) => String(b.nodeId));
  }
  const results = await admin.describeConfigs(
    names.map((name) => ({ type: e.type, name })),
    { includeSynonyms: true },
  );
  const all = args.has('all');
  const json: unknown[] = [];
  let code = 0;
  for (const r of results) {
    if (r.error !== null) {
      err(`Error while executing config command: ${r.error.message}`);
      code = 1;
      continue;
    }
    // Kafka's tool shows, for each entity, the configs set at that entity's level.
    const ownSources =
      e.type === 'topic'
        ? ['DYNAMIC_TOPIC_CONFIG']
        : e.type === 'broker-logger'
          ? ['DYNAMIC_BROKER_LOGGER_CONFIG']
          : e.defaults
            ? ['DYNAMIC_DEFAULT_BROKER_CONFIG']
            : ['DYNAMIC_BROKER_CONFIG', 'DYNAMIC_DEFAULT_BROKER_CONFIG'];
    const dynamic = (s: string) => ownSources.includes(s);
    const entries = r.configs
      .filter((c) => all || dynamic(c.source))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    if (args.has('json')) {
      json.push({ type: e.type, name: r.name, configs: entries });
      continue;
    }
    const what = e.defaults ? `default ${LABEL[e.type]}` : `${LABEL[e.type]} ${r.name}`;
    out(all ? `All configs for ${what} are:` : `Dynamic configs for ${what} are:`);
    for (const c of entries) {
      const value = c.isSensitive ? null : c.value;
      const synonyms = c.synonyms
        .filter((s) => all || dynamic(s.source))
        .map((s) => `${s.source}:${s.name}=${s.value}`)
        .join(', ');
      out(`  ${c.name}=${value} sensitive=${c.isSensitive} synonyms={${synonyms}}`);
    }
  }
  if (args.has('json')) out(JSON.stringify(json));
  return code;
}

async function alter(
  admin: Admin,
  args: ParsedArgs,
  e: { type: ConfigResourceType; name: string; defaults: boolean },
): Promise<number> {
  const adds = args.get('add-config');
  const deletes = args.get('delete-config');
  if (adds === undefined && deletes === undefined)
    throw new UsageError('--alter needs --add-config or --delete-config');
  if (e.name === '' && !e.defaults) throw new UsageError('--alter needs an entity name');
  const ops: { name: string; op: 'set' | 'delete'; value?: string }[] = [];
  for (const item of splitTopLevel(adds ?? '')) {
    const i = item.indexOf('=');
    if (i <= 0) throw new UsageError(`bad --add-config entry '${item}', expected key=value`);
    let value = item.slice(i + 1);
    // Kafka's list syntax k=[a,b] becomes the comma-separated value a,b.
    if (value.startsWith('[') && value.endsWith(']')) value = value.slice(1, -1);
    ops.push({ name: item.slice(0, i).trim(), op: 'set', value });
  }
  for (const name of (deletes ?? '').split(',').filter((x) => x.trim() !== ''))
    ops.push({ name: name.trim(), op: 'delete' });
  const [r] = await admin.incrementalAlterConfigs([{ type: e.type, name: e.name, ops }]);
  const what = e.defaults ? `default ${LABEL[e.type]}` : `${LABEL[e.type]} ${e.name}`;
  if (r!.error !== null) {
    err(
      `Error while executing config command with args '${process.argv.slice(2).join(' ')}'\n${r!.error.message}`,
    );
    return 1;
  }
  if (args.has('json')) out(JSON.stringify({ type: e.type, name: e.name, updated: ops.map((o) => o.name) }));
  else out(`Completed updating config for ${what}.`);
  return 0;
}
