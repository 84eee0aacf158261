// `brook broker-api-versions` (kafka-broker-api-versions.sh): asks every broker of the cluster for its ApiVersions
// and prints one block per broker in Kafka's NodeApiVersions format, so scripts that grep it keep working:
//
//   host:9092 (id: 1 rack: null) -> (
//   	Produce(0): 0 to 11 [usable: 11],
//   	...
//   )
//
// "usable" is the highest version both this client and the broker speak; an API the client knows but the broker
// does not answer is listed as UNSUPPORTED, and one the client has no codec for as UNKNOWN(key).

import { Admin } from '../client/admin.js';
import { CLIENT_MAX_VERSIONS } from '../client/connection.js';
import type { ApiVersionsResponse } from '../protocol/messages/18-api-versions.js';
import { APIS, ApiKey, findApi } from '../protocol/registry.js';
import type { ParsedArgs } from './args.js';
import { clientOptions, newClient, out, runTool, type Tool } from './client-tool.js';

const tool: Tool = {
  name: 'broker-api-versions',
  summary: 'Print the API versions every broker of the cluster supports.',
  specs: {},
  run: brokerApiVersions,
};

export function runBrokerApiVersions(args: string[]): Promise<number> {
  return runTool(tool, args);
}

/** The newest version this client sends of an API, as Connection.pickVersion caps it. */
function clientLatest(apiKey: number): number | undefined {
  const api = findApi(apiKey);
  if (api === undefined) return undefined;
  let latest = Math.min(api.maxVersion, CLIENT_MAX_VERSIONS[apiKey] ?? api.maxVersion);
  if (api.latestVersionUnstable) latest = Math.min(latest, api.maxVersion - 1);
  return latest;
}

function apiLine(v: { apiKey: number; minVersion: number; maxVersion: number }): string {
  const api = findApi(v.apiKey);
  const range = v.minVersion === v.maxVersion ? `${v.minVersion}` : `${v.minVersion} to ${v.maxVersion}`;
  if (api === undefined) return `UNKNOWN(${v.apiKey}): ${range}`;
  const latest = clientLatest(v.apiKey)!;
  let usable: string;
  if (latest < v.minVersion) usable = '[unusable: node too new]';
  else if (v.maxVersion < api.minVersion) usable = '[unusable: node too old]';
  else usable = `[usable: ${Math.min(latest, v.maxVersion)}]`;
  return `${api.name}(${v.apiKey}): ${range} ${usable}`;
}

/** Kafka's NodeApiVersions.toString(true): every answered API, then the client's APIs the broker lacks. */
export function formatApiVersions(
  apiKeys: { apiKey: number; minVersion: number; maxVersion: number }[],
): string {
  const lines = new Map<number, string>();
  for (const v of apiKeys) lines.set(v.apiKey, apiLine(v));
  for (const api of APIS) {
    if (api.listeners.includes('broker') && !lines.has(api.apiKey))
      lines.set(api.apiKey, `${api.name}(${api.apiKey}): UNSUPPORTED`);
  }
  const sorted = [...lines.entries()].sort((a, b) => a[0] - b[0]).map(([, line]) => line);
  return `(\n\t${sorted.join(',\n\t')}\n)`;
}

async function brokerApiVersions(args: ParsedArgs): Promise<number> {
  const admin = newClient(() => new Admin(clientOptions(args)));
  try {
    const brokers = [...(await admin.cluster.refreshMetadata()).brokers.values()].sort(
      (a, b) => a.nodeId - b.nodeId,
    );
    const json: unknown[] = [];
    for (const b of brokers) {
      const node = `${b.host}:${b.port} (id: ${b.nodeId} rack: ${b.rack ?? 'null'})`;
      try {
        const res = await admin.cluster.send<ApiVersionsResponse>(b.nodeId, ApiKey.API_VERSIONS, {
          clientSoftwareName: 'brook-cli',
          clientSoftwareVersion: '0',
        });
        if (res.errorCode !== 0) throw new Error(`ApiVersions answered error code ${res.errorCode}`);
        if (args.has('json'))
          json.push({ broker: b.nodeId, host: b.host, port: b.port, apiKeys: res.apiKeys });
        else out(`${node} -> ${formatApiVersions(res.apiKeys)}`);
      } catch (e) {
        if (args.has('json'))
          json.push({ broker: b.nodeId, host: b.host, port: b.port, error: (e as Error).message });
        else out(`${node} -> ERROR: ${(e as Error).message}`);
      }
    }
    if (args.has('json')) out(JSON.stringify(json));
    return 0;
  } finally {
    await admin.close();
  }
}
