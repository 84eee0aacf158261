// `brook connect-standalone worker.properties [connector.properties|connector.json ...]`, as Kafka's
// connect-standalone.sh: one Connect worker with its REST API, running the connectors given on the command
// line (a .properties file of the connector config, or a .json file shaped as the body of POST /connectors or
// as a bare config object). Prints "REST server listening at URL" and "Kafka Connect started" once it serves
// (tests and scripts wait for those lines); runs until SIGTERM or SIGINT and exits 0 after stopping every
// task. A bad worker or connector config exits 2 with one line saying why.

import { readFileSync } from 'node:fs';
import { ConnectException } from '../connect/errors.js';
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

/**
 * A connector file as Kafka's ConnectStandalone.parseConnectorConfigurationFile reads it, whatever its name ends
 * with: a JSON object of plain values (the config, which must hold `name`), else a JSON object shaped as the body
 * of POST /connectors (a `name` in its config must be the body's, else the body's is put there), else a
 * .properties file (which must hold `name`), with Kafka's messages.
 */
function readConnectorFile(path: string): Record<string, string> {
  const text = readFileSync(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const flat = plainValues(json);
  if (flat !== null) return withName(path, flat);
  if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
    const request = json as Record<string, unknown>;
    const config = plainValues(request.config ?? {});
    if (config !== null) {
      const name = typeof request.name === 'string' ? request.name : undefined;
      if (config.name !== undefined) {
        if (config.name !== name)
          throw new ConnectException(
            `Connector name configuration in 'config' doesn't match the one specified in 'name' at '${path}'`,
          );
      } else if (name !== undefined) {
        config.name = name;
      }
      return config;
    }
  }
  return withName(path, parseProperties(text));
}

/** A JSON object whose values are all strings, numbers or booleans, as strings (Jackson's Map<String, String>). */
function plainValues(v: unknown): Record<string, string> | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string' && typeof x !== 'number' && typeof x !== 'boolean') return null;
    out[k] = String(x);
  }
  return out;
}

function withName(path: string, config: Record<string, string>): Record<string, string> {
  if (config.name === undefined)
    throw new ConnectException(
      `Connector configuration at '${path}' is missing the mandatory 'name' configuration`,
    );
  return config;
}
