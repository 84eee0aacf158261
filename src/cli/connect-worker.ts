// What `brook connect-standalone` and `brook connect-distributed` share: the arguments (`-daemon` accepted and
// ignored, as Kafka's scripts take it), the worker properties file, starting the worker with its error handling,
// the lines tests and scripts wait for ("REST server listening at URL", "Kafka Connect started"), and running until
// SIGTERM or SIGINT, then stopping the worker and exiting 0. The exit codes are Kafka's AbstractConnectCli and
// ConnectStandalone ones, which scripts and service managers test: 1 for the usage (no worker properties, or
// --help), 2 when the worker cannot start (a bad config, a file that cannot be read, a port in use; anything else is
// a bug and is thrown), 3 when the work after the start fails (a connector file that cannot be read or created),
// and 1 when the worker failed after it started (a distributed herder whose group was refused).

import { readFileSync } from 'node:fs';
import type { Logger, LogSink } from '../common/logger.js';
import { ConnectException } from '../connect/errors.js';
import { CONNECT_LOGGERS, type Loggers } from '../connect/runtime/loggers.js';
import { parseProperties } from '../connect/runtime/properties.js';

/** Missing arguments or --help: AbstractConnectCli.run. */
export const EXIT_USAGE = 1;
/** The worker could not be configured or started: AbstractConnectCli.run's catch. */
export const EXIT_START_FAILED = 2;
/** The work after the start failed (a connector file): ConnectStandalone.processExtraArgs. */
export const EXIT_AFTER_START_FAILED = 3;
/** The herder failed after the start: DistributedHerder's work thread exits the process. */
export const EXIT_HERDER_FAILED = 1;

export interface RunningWorker {
  readonly restUrl: string;
  readonly workerId: string;
  /** The worker's loggers: the command's own lines obey their levels too. */
  readonly loggers: Loggers;
  /** Settles when the worker can no longer work (a distributed herder refused its group): the command exits 1. */
  readonly failed?: Promise<Error>;
  stop(): Promise<void>;
}

export interface WorkerCommand<L, W extends RunningWorker> {
  /** The command's name, for its messages (connect-standalone). */
  command: string;
  usage: string;
  /** Whether this many file arguments (the worker properties first) are right. */
  fileCount(n: number): boolean;
  /** Reads what the worker needs to start from the files other than the worker properties; throws when one is bad. */
  load(workerProps: Record<string, string>, otherFiles: string[]): L;
  /** Starts the worker, its log lines (formatted by its loggers) written to `sink`. */
  start(loaded: L, sink: LogSink): Promise<W>;
  /** Work after the worker serves (creating connectors): an error message stops it and exits 3. */
  afterStart?(worker: W, loaded: L, log: Logger): Promise<string | null>;
  /** How long the process may linger after the worker stopped before it exits anyway. */
  exitGraceMs?: number;
}

export async function runWorker<L, W extends RunningWorker>(
  c: WorkerCommand<L, W>,
  args: string[],
): Promise<number> {
  // Kafka's AbstractConnectCli.run exits 1 on --help as on missing arguments.
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(c.usage);
    return EXIT_USAGE;
  }
  const files = args.filter((a) => a !== '-daemon');
  if (!c.fileCount(files.length)) {
    process.stderr.write(c.usage);
    return EXIT_USAGE;
  }
  const fail = (message: string, code = EXIT_START_FAILED) => {
    process.stderr.write(`brook ${c.command}: ${message}\n`);
    return code;
  };
  const sink: LogSink = (line) => process.stderr.write(`${line}\n`);
  let loaded: L;
  try {
    loaded = c.load(parseProperties(readFileSync(files[0]!, 'utf8')), files.slice(1));
  } catch (err) {
    return fail((err as Error).message);
  }
  let worker: W;
  try {
    worker = await c.start(loaded, sink);
  } catch (err) {
    // A config the worker refuses, or the system refusing a file or a port: the user's to fix.
    if (err instanceof ConnectException || (err as NodeJS.ErrnoException).code !== undefined)
      return fail((err as Error).message);
    throw err;
  }
  const log = worker.loggers.logger(CONNECT_LOGGERS.connect);
  const scheme = worker.restUrl.startsWith('https:') ? 'https' : 'http';
  process.stdout.write(
    `REST server listening at ${worker.restUrl}/, advertising URL ${scheme}://${worker.workerId}/\n`,
  );
  const problem = (await c.afterStart?.(worker, loaded, log)) ?? null;
  if (problem !== null) {
    await worker.stop();
    return fail(problem, EXIT_AFTER_START_FAILED);
  }
  process.stdout.write('Kafka Connect started\n');
  const failure = await untilSignalOrFailure(worker.failed);
  log.info('Kafka Connect stopping');
  await worker.stop();
  log.info('Kafka Connect stopped');
  // A failed herder: Kafka's exits the process with status 1.
  const code = failure === null ? 0 : EXIT_HERDER_FAILED;
  if (c.exitGraceMs !== undefined) setTimeout(() => process.exit(code), c.exitGraceMs).unref();
  return code;
}

/**
 * Waits for SIGTERM or SIGINT (null), or for `failed` to settle first (its error): a Connect worker's or
 * MirrorMaker's herder that can no longer work, on which Kafka's process exits 1.
 */
export function untilSignalOrFailure(failed?: Promise<Error>): Promise<Error | null> {
  const signalled = new Promise<null>((resolve) => {
    process.once('SIGTERM', () => resolve(null));
    process.once('SIGINT', () => resolve(null));
  });
  return failed === undefined ? signalled : Promise.race([signalled, failed]);
}
