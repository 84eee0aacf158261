// `brook connect-distributed worker.properties`, as Kafka's connect-distributed.sh: one worker of a Connect cluster
// (the workers sharing group.id), with its REST API. Prints "REST server listening at URL" once it serves and
// "Kafka Connect started" once it has joined the group and received its first assignment (tests and scripts
// wait for those lines); runs until SIGTERM or SIGINT and exits 0 after stopping its work and leaving the
// group. A bad worker config exits 2 with one line saying why.

import { readFileSync } from 'node:fs';
import { ConnectException } from '../connect/errors.js';
import { startDistributed } from '../connect/runtime/distributed/distributed.js';
import { parseProperties } from '../connect/runtime/properties.js';

const USAGE = 'usage: brook connect-distributed [-daemon] worker.properties\n';
/** How long the process may linger after the worker stopped before it exits anyway. */
const EXIT_GRACE_MS = 2000;

export async function runConnectDistributed(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const files = args.filter((a) => a !== '-daemon');
  if (files.length !== 1) {
    process.stderr.write(USAGE);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`[${new Date().toISOString()}] ${line}\n`);
  let props: Record<string, string>;
  try {
    props = parseProperties(readFileSync(files[0]!, 'utf8'));
  } catch (err) {
    process.stderr.write(`brook connect-distributed: ${(err as Error).message}\n`);
    return 2;
  }
  let worker: Awaited<ReturnType<typeof startDistributed>>;
  try {
    worker = await startDistributed(props, log);
  } catch (err) {
    if (err instanceof ConnectException || (err as NodeJS.ErrnoException).code !== undefined) {
      process.stderr.write(`brook connect-distributed: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
  process.stdout.write(
    `REST server listening at ${worker.restUrl}/, advertising URL http://${worker.workerId}/\n`,
  );
  process.stdout.write('Kafka Connect started\n');
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  log('Kafka Connect stopping');
  await worker.stop();
  log('Kafka Connect stopped');
  // A task client still closing in the background (a sink consumer leaving a group that waits in a rebalance
  // for a dead member) must not hold the process: everything that needed an orderly end has had it.
  setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
  return 0;
}
