// `brook connect-standalone worker.properties [connector.properties|connector.json ...]`, as Kafka's
// connect-standalone.sh: one Connect worker with its REST API, running the connectors given on the command
// line (a .properties file of the connector config, or a .json file shaped as the body of POST /connectors or
// as a bare config object). Prints "REST server listening at URL" and "Kafka Connect started" once it serves
// (tests and scripts wait for those lines); runs until SIGTERM or SIGINT and exits 0 after stopping every
// task. A bad worker or connector config exits 2 with one line saying why.

import { readFileSync } from 'node:fs';
import { RestError } from '../connect/errors.js';
import { parseProperties } from '../connect/runtime/properties.js';
import { startStandalone } from '../connect/runtime/standalone.js';
import { runWorker } from './connect-worker.js';

const USAGE =
  'usage: brook connect-standalone [-daemon] worker.properties [connector1.properties connector2.json ...]\n';

export function runConnectStandalone(args: string[]): Promise<number> {
  return runWorker(
    {
      command: 'connect-standalone',
      usage: USAGE,
      fileCount: (n) => n >= 1,
      load: (workerProps, files) => ({ workerProps, connectors: files.map(readConnectorFile) }),
      start: (loaded, sink) => startStandalone(loaded.workerProps, sink),
      async afterStart(worker, loaded, log) {
        for (const config of loaded.connectors) {
          try {
            const name = config.name ?? '';
            await worker.herder.putConnectorConfig(name, config, false);
            log.info(`Created connector ${name}`);
          } catch (err) {
            return `failed to create connector ${config.name ?? '(no name)'}: ${(err as Error).message}`;
          }
        }
        return null;
      },
    },
    args,
  );
}

function readConnectorFile(path: string): Record<string, string> {
  const text = readFileSync(path, 'utf8');
  if (!path.endsWith('.json')) return parseProperties(text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new Error(`${path}: expected a JSON object`);
  const obj = json as Record<string, unknown>;
  const config = (typeof obj.config === 'object' && obj.config !== null ? obj.config : obj) as Record<
    string,
    unknown
  >;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) out[k] = String(v);
  if (typeof obj.name === 'string') out.name = obj.name;
  if (out.name === undefined) throw new RestError(400, `${path}: the connector config has no "name"`);
  return out;
}
