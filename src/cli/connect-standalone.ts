// `brook connect-standalone worker.properties [connector.properties|connector.json ...]`, as Kafka's
// connect-standalone.sh: one Connect worker with its REST API, running the connectors given on the command
// line (a .properties file of the connector config, or a .json file shaped as the body of POST /connectors or
// as a bare config object). Prints "REST server listening at URL" and "Kafka Connect started" once it serves
// (tests and scripts wait for those lines); runs until SIGTERM or SIGINT and exits 0 after stopping every
// task. As Kafka's ConnectStandalone, the connector files are read once the worker serves: a bad worker config
// exits 2, a connector file that cannot be read or a connector that cannot be created exits 3, with one line
// saying why. A file shaped as the body of POST /connectors may hold `initial_state` (KIP-980: RUNNING, PAUSED or
// STOPPED), with which the connector is created.

import { readFileSync } from 'node:fs';
import { ConnectException } from '../connect/errors.js';
import { parseProperties } from '../connect/runtime/properties.js';
import { startStandalone } from '../connect/runtime/standalone.js';
import type { TargetState } from '../connect/runtime/status.js';
import { runWorker } from './connect-worker.js';

const USAGE =
  'usage: brook connect-standalone [-daemon] worker.properties [connector1.properties connector2.json ...]\n';

export function runConnectStandalone(args: string[]): Promise<number> {
  return runWorker(
    {
      command: 'connect-standalone',
      usage: USAGE,
      fileCount: (n) => n >= 1,
      load: (workerProps, files) => ({ workerProps, connectorFiles: files }),
      start: (loaded, sink) => startStandalone(loaded.workerProps, sink),
      async afterStart(worker, loaded, log) {
        // One at a time and in order, as Kafka's processExtraArgs: the first failure stops the worker.
        for (const path of loaded.connectorFiles) {
          let request: ConnectorFile;
          try {
            request = readConnectorFile(path);
          } catch (err) {
            return (err as Error).message;
          }
          const name = request.config.name ?? '';
          try {
            await worker.herder.putConnectorConfig(name, request.config, false, request.initialState);
            log.info(`Created connector ${name}`);
          } catch (err) {
            return `failed to create connector ${name} from ${path}: ${(err as Error).message}`;
          }
        }
        // As Kafka's ConnectStandalone: startup is complete once the command line's connectors exist (GET /health).
        worker.herder.ready();
        return null;
      },
    },
    args,
  );
}

/** What a connector file asks for: Kafka's CreateConnectorRequest. */
interface ConnectorFile {
  config: Record<string, string>;
  /** The target state the connector is created in: `initial_state`, RUNNING (STARTED) when absent. */
  initialState: TargetState;
}

/**
 * A connector file as Kafka's ConnectStandalone.parseConnectorConfigurationFile reads it, whatever its name ends
 * with: a JSON object of plain values (the config, which must hold `name`), else a JSON object shaped as the body
 * of POST /connectors (a `name` in its config must be the body's, else the body's is put there; `initial_state` one
 * of Kafka's InitialState names in any case, else the object is no such body), else a .properties file (which must
 * hold `name`), with Kafka's messages.
 */
function readConnectorFile(path: string): ConnectorFile {
  const text = readFileSync(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const flat = plainValues(json);
  if (flat !== null) return { config: withName(path, flat), initialState: 'STARTED' };
  if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
    const request = json as Record<string, unknown>;
    const config = plainValues(request.config ?? {});
    const initialState = initialStateOf(request.initial_state);
    if (config !== null && initialState !== null) {
      const name = typeof request.name === 'string' ? request.name : undefined;
      if (config.name !== undefined) {
        if (config.name !== name)
          throw new ConnectException(
            `Connector name configuration in 'config' doesn't match the one specified in 'name' at '${path}'`,
          );
      } else if (name !== undefined) {
        config.name = name;
      }
      return { config, initialState };
    }
  }
  return { config: withName(path, parseProperties(text)), initialState: 'STARTED' };
}

/**
 * `initial_state` as Jackson reads Kafka's CreateConnectorRequest.InitialState (forValue: the name in any case),
 * as a target state; null when Jackson would refuse it, which makes the file no such request.
 */
function initialStateOf(v: unknown): TargetState | null {
  if (v === undefined || v === null) return 'STARTED';
  if (typeof v !== 'string') return null;
  const state = v.toUpperCase();
  if (state === 'RUNNING') return 'STARTED';
  if (state === 'PAUSED' || state === 'STOPPED') return state;
  return null;
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
