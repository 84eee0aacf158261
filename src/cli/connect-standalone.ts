// `brook connect-standalone worker.properties [connector.properties|connector.json ...]`, as Kafka's
// connect-standalone.sh: one Connect worker with its REST API, running the connectors given on the command
// line (a .properties file of the connector config, or a .json file shaped as the body of POST /connectors or
// as a bare config object). Prints "REST server listening at URL" and "Kafka Connect started" once it serves
// (tests and scripts wait for those lines); runs until SIGTERM or SIGINT and exits 0 after stopping every
// task. A bad worker or connector config exits 2 with one line saying why.

import { readFileSync } from 'node:fs';
import { ConnectException, RestError } from '../connect/errors.js';
import { parseProperties } from '../connect/runtime/properties.js';
import { startStandalone } from '../connect/runtime/standalone.js';

const USAGE =
  'usage: brook connect-standalone [-daemon] worker.properties [connector1.properties connector2.json ...]\n';

export async function runConnectStandalone(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const files = args.filter((a) => a !== '-daemon');
  if (files.length < 1) {
    process.stderr.write(USAGE);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`[${new Date().toISOString()}] ${line}\n`);
  let workerProps: Record<string, string>;
  let connectorConfigs: Record<string, string>[];
  try {
    workerProps = parseProperties(readFileSync(files[0]!, 'utf8'));
    connectorConfigs = files.slice(1).map(readConnectorFile);
  } catch (err) {
    process.stderr.write(`brook connect-standalone: ${(err as Error).message}\n`);
    return 2;
  }
  let worker: Awaited<ReturnType<typeof startStandalone>>;
  try {
    worker = await startStandalone(workerProps, log);
  } catch (err) {
    if (err instanceof ConnectException || (err as NodeJS.ErrnoException).code !== undefined) {
      process.stderr.write(`brook connect-standalone: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
  process.stdout.write(
    `REST server listening at ${worker.restUrl}/, advertising URL http://${worker.workerId}/\n`,
  );
  for (const config of connectorConfigs) {
    try {
      const name = config.name ?? '';
      await worker.herder.putConnectorConfig(name, config, false);
      log(`Created connector ${name}`);
    } catch (err) {
      process.stderr.write(
        `brook connect-standalone: failed to create connector ${config.name ?? '(no name)'}: ${(err as Error).message}\n`,
      );
      await worker.stop();
      return 2;
    }
  }
  process.stdout.write('Kafka Connect started\n');
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  log('Kafka Connect stopping');
  await worker.stop();
  log('Kafka Connect stopped');
  return 0;
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
