// `brook mirror-maker mm2.properties [--clusters B,C]`, as Kafka's connect-mirror-maker.sh: MirrorMaker 2 in
// dedicated mode for every enabled flow of the file, and every other pair for its heartbeats, as Kafka runs them
// (only flows into the --clusters targets when given).
// Several processes on the same file share the flows' work (KIP-710; dedicated.mode.enable.internal.rest=true).
// With brook.metrics.listener=http://host:port in the file, serves the mirror's metrics at /metrics (Prometheus).
// Prints "MirrorMaker started" once every flow runs; runs until SIGTERM or SIGINT, or until a flow's herder fails
// (its Connect group refused, say), which exits 1 as Kafka's MirrorMaker does. `--status` instead prints
// each mirrored partition's source end offset, the mirror's position and the lag, then exits. A bad file exits 2.

import { readFileSync } from 'node:fs';
import { ConnectException } from '../connect/errors.js';
import { startMetricsServer } from '../connect/mirror/metrics-server.js';
import { setClientSecurity } from '../connect/mirror/mirror-config.js';
import { MirrorMaker } from '../connect/mirror/mirror-maker.js';
import { mirrorLag } from '../connect/mirror/status.js';
import { CONNECT_LOGGERS } from '../connect/runtime/loggers.js';
import { parseProperties } from '../connect/runtime/properties.js';
import { UsageError } from './args.js';
import { securityOptions } from './client-security.js';
import { untilSignalOrFailure } from './connect-worker.js';

const USAGE = 'usage: brook mirror-maker mm2.properties [--clusters alias,...] [--status]\n';

export async function runMirrorMaker(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  let file: string | null = null;
  let targets: string[] | null = null;
  let status = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--status') status = true;
    else if (a === '--clusters') targets = (args[++i] ?? '').split(',').filter((s) => s !== '');
    else if (a.startsWith('--')) {
      process.stderr.write(`brook mirror-maker: unknown option ${a}\n${USAGE}`);
      return 2;
    } else file = a;
  }
  if (file === null) {
    process.stderr.write(USAGE);
    return 2;
  }
  setClientSecurity(securityOptions);
  const sink = (line: string) => process.stderr.write(`${line}\n`);
  let props: Record<string, string>;
  try {
    props = parseProperties(readFileSync(file, 'utf8'));
  } catch (err) {
    process.stderr.write(`brook mirror-maker: ${(err as Error).message}\n`);
    return 2;
  }
  try {
    if (status) return await printStatus(props);
    const listener = props['brook.metrics.listener'];
    const metrics =
      listener === undefined || listener.trim() === '' ? null : await startMetricsServer(listener);
    if (metrics !== null) process.stdout.write(`Metrics listening at ${metrics.url}/metrics\n`);
    const mm = await MirrorMaker.start(props, sink, targets).catch(async (err) => {
      await metrics?.close();
      throw err;
    });
    process.stdout.write('MirrorMaker started\n');
    const failure = await untilSignalOrFailure(mm.failed);
    const log = mm.loggers.logger(CONNECT_LOGGERS.mirrorMaker);
    log.info('MirrorMaker stopping');
    await mm.stop();
    await metrics?.close();
    log.info('MirrorMaker stopped');
    // A failed herder: Kafka's exits the whole process with status 1.
    return failure === null ? 0 : 1;
  } catch (err) {
    if (err instanceof ConnectException || err instanceof UsageError) {
      process.stderr.write(`brook mirror-maker: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
}

async function printStatus(props: Record<string, string>): Promise<number> {
  const rows = await mirrorLag(props);
  const header = [
    'FLOW',
    'TOPIC',
    'PARTITION',
    'REMOTE-TOPIC',
    'SOURCE-END-OFFSET',
    'MIRRORED-OFFSET',
    'LAG',
  ];
  const table = [
    header,
    ...rows.map((r) => [
      r.flow,
      r.topic,
      String(r.partition),
      r.remoteTopic,
      String(r.sourceEndOffset),
      String(r.mirroredOffset),
      String(r.lag),
    ]),
  ];
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table)
    process.stdout.write(
      `${row
        .map((c, i) => c.padEnd(widths[i]!))
        .join(' ')
        .trimEnd()}\n`,
    );
  return 0;
}
