// MirrorMaker 2's dedicated-mode configuration file (Kafka's MirrorMakerConfig): `clusters` names the clusters;
// `<alias>.<key>` are a cluster's client settings (bootstrap.servers, security.protocol, ssl.*, sasl.*; top-level
// security keys apply to every cluster unless the cluster sets its own); `A->B.enabled = true` turns a flow on;
// `A->B.<key>` overrides a top-level key for one flow (topics, groups, replication.factor, ...). Every other pair
// runs too while it emits heartbeats (Kafka's rule, see parseResolved), with its replication off. For each flow
// this gives the connector config shared by its three connectors (source.cluster.* and target.cluster.*
// carry the cluster settings, as in Kafka) and the worker config of the Connect worker that runs them, on the
// target cluster, with its internal topics named as Kafka names them (mm2-offsets.<source>.internal, ...): the
// target cluster's keys (`B.exactly.once.source.support`, ...) and a few top-level prefixes, as Kafka's
// MirrorMakerConfig.workerConfig. Config provider variables (`config.providers`, `${file:/path:key}`,
// `${env:VAR}`) are resolved in what this process uses itself (the worker config, its own clients), as Kafka's
// workerConfig transforms them; the connector configs written to the config topic keep them, with the
// `config.providers*` keys, and the worker resolves them when a connector or task starts (so secrets read
// through a provider are not stored in the topic).

import { ConfigException } from '../errors.js';
import { CONFIG_PROVIDERS_CONFIG, ConfigTransformer } from '../runtime/config-providers.js';
import { isClientSecurityKey } from './mirror-config.js';

export const BYTE_ARRAY_CONVERTER = 'org.apache.kafka.connect.converters.ByteArrayConverter';

export interface Flow {
  source: string;
  target: string;
  /**
   * `A->B.enabled`: the pair replicates (records, configs, ACLs, checkpoints). False for a pair run only for its
   * heartbeats (see parseResolved); its connectors get `enabled=false` and only MirrorHeartbeatConnector works.
   */
  replicates: boolean;
  /** The config of the flow's connectors, without `name` and `connector.class`; variables resolved. */
  connectorProps: Record<string, string>;
  /** The same as written to the config topic: config provider variables kept (the worker resolves them). */
  storedConnectorProps: Record<string, string>;
  /** The Connect worker config for the flow (bootstrap.servers is the target cluster). */
  workerProps: Record<string, string>;
  /** The target cluster's client settings (bootstrap.servers and security keys). */
  targetClusterProps: Record<string, string>;
}

export interface MirrorMakerConfig {
  clusters: string[];
  flows: Flow[];
  clusterProps(alias: string): Record<string, string>;
}

/**
 * Worker keys a flow takes from the file (top-level, or `A->B.` for one flow): Brook's, kept for files written
 * before the worker took Kafka's keys (below).
 */
const WORKER_KEYS = [
  'offset.flush.interval.ms',
  'offset.flush.timeout.ms',
  'task.shutdown.graceful.timeout.ms',
];

/**
 * Top-level key prefixes Kafka's MirrorMakerConfig.workerConfig passes to every flow's worker; every other worker
 * key is the target cluster's (`B.exactly.once.source.support`, `B.scheduled.rebalance.max.delay.ms`, ...).
 */
const WORKER_PREFIXES = [
  'offset.storage',
  'config.storage',
  'status.storage',
  'key.converter',
  'value.converter',
  'header.converter',
  'task',
  'worker',
  'replication.policy',
];

/** Top-level keys of the dedicated mode's internal REST server (KIP-710), the same for every flow. */
export const REST_KEYS = [
  'listeners',
  'rest.host.name',
  'rest.port',
  'rest.advertised.host.name',
  'rest.advertised.port',
  'rest.advertised.listener',
];

const FLOW_KEY = /^([^.>-][^>]*?)->([^.]+)\.(.+)$/;

export function parseMirrorMakerConfig(props: Readonly<Record<string, string>>): MirrorMakerConfig {
  const resolved = parseResolved(ConfigTransformer.fromConfig(props).transform(props));
  const stored = parseResolved(props);
  return {
    ...resolved,
    flows: resolved.flows.map((f, i) => ({ ...f, storedConnectorProps: stored.flows[i]!.connectorProps })),
  };
}

/** The file's flows, as if its values held no variables. */
function parseResolved(props: Readonly<Record<string, string>>): MirrorMakerConfig {
  const clusters = (props.clusters ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (clusters.length === 0)
    throw new ConfigException('Missing required configuration "clusters" which has no default value.');
  const isClusterKey = (k: string) => clusters.some((a) => k.startsWith(`${a}.`));
  const topLevel: Record<string, string> = {};
  for (const [k, v] of Object.entries(props)) {
    if (k === 'clusters' || k.startsWith('brook.') || FLOW_KEY.test(k) || isClusterKey(k)) continue;
    topLevel[k] = v;
  }
  const clusterProps = (alias: string): Record<string, string> => {
    if (!clusters.includes(alias)) throw new ConfigException(`Unknown cluster alias ${alias}`);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(topLevel)) if (isClientSecurityKey(k)) out[k] = v;
    for (const [k, v] of Object.entries(props))
      if (k.startsWith(`${alias}.`)) out[k.slice(alias.length + 1)] = v;
    if ((out['bootstrap.servers'] ?? '').trim() === '')
      throw new ConfigException(
        `Missing required configuration "${alias}.bootstrap.servers" which has no default value.`,
      );
    return out;
  };
  const flows: Flow[] = [];
  for (const source of clusters) {
    for (const target of clusters) {
      if (source === target) continue;
      const prefix = `${source}->${target}.`;
      const flowProps: Record<string, string> = { ...topLevel };
      for (const [k, v] of Object.entries(props))
        if (k.startsWith(prefix)) flowProps[k.slice(prefix.length)] = v;
      // Kafka's MirrorMakerConfig.clusterPairs: a pair runs when it is enabled or emits heartbeats
      // (emit.heartbeats.enabled, top-level or `A->B.`, true by default). So a one-way flow A->B also runs B->A
      // for its MirrorHeartbeatConnector, whose heartbeats in A's `heartbeats` topic reach B as `A.heartbeats`:
      // what Kafka's MirrorClient reads to find B's upstream clusters, and what shows the flow alive end to end.
      const replicates = isTrue(flowProps.enabled ?? 'false');
      if (!replicates && !isTrue(flowProps['emit.heartbeats.enabled'] ?? 'true')) continue;
      delete flowProps.enabled;
      const sourceProps = clusterProps(source);
      const targetProps = clusterProps(target);
      const connectorProps: Record<string, string> = {};
      for (const [k, v] of Object.entries(flowProps)) {
        if (!isClientSecurityKey(k) && !WORKER_KEYS.includes(k)) connectorProps[k] = v;
      }
      // As Kafka's connectorBaseConfig: MirrorSourceConnector and MirrorCheckpointConnector do nothing when false.
      connectorProps.enabled = String(replicates);
      connectorProps['source.cluster.alias'] = source;
      connectorProps['target.cluster.alias'] = target;
      for (const [k, v] of Object.entries(sourceProps)) connectorProps[`source.cluster.${k}`] = v;
      for (const [k, v] of Object.entries(targetProps)) connectorProps[`target.cluster.${k}`] = v;
      connectorProps['key.converter'] = BYTE_ARRAY_CONVERTER;
      connectorProps['value.converter'] = BYTE_ARRAY_CONVERTER;
      // Kafka's MirrorMakerConfig.workerConfig: the target cluster's keys, then the top-level worker prefixes,
      // then its defaults for what is still unset.
      const workerProps: Record<string, string> = { ...targetProps };
      for (const [k, v] of Object.entries(topLevel))
        if (WORKER_PREFIXES.some((prefix) => k.startsWith(prefix))) workerProps[k] = v;
      for (const k of REST_KEYS) if (topLevel[k] !== undefined) workerProps[k] = topLevel[k]!;
      for (const [k, v] of Object.entries(topLevel))
        if (k.startsWith(CONFIG_PROVIDERS_CONFIG)) workerProps[k] = v;
      for (const k of WORKER_KEYS) if (flowProps[k] !== undefined) workerProps[k] = flowProps[k]!;
      const defaults: Record<string, string> = {
        'client.id': `${source}->${target}`,
        'group.id': `${source}-mm2`,
        'config.storage.topic': `mm2-configs.${source}.internal`,
        'offset.storage.topic': `mm2-offsets.${source}.internal`,
        'status.storage.topic': `mm2-status.${source}.internal`,
        'key.converter': BYTE_ARRAY_CONVERTER,
        'value.converter': BYTE_ARRAY_CONVERTER,
      };
      for (const [k, v] of Object.entries(defaults)) workerProps[k] ??= v;
      flows.push({
        source,
        target,
        replicates,
        connectorProps,
        storedConnectorProps: connectorProps,
        workerProps,
        targetClusterProps: targetProps,
      });
    }
  }
  return { clusters, flows, clusterProps };
}

/** Kafka's Boolean.parseBoolean: "true" in any case is true, anything else false. */
function isTrue(text: string): boolean {
  return text.trim().toLowerCase() === 'true';
}
