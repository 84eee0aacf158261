// `brook connect-distributed worker.properties`, as Kafka's connect-distributed.sh: one worker of a Connect cluster
// (the workers sharing group.id), with its REST API. Prints "REST server listening at URL" once it serves and
// "Kafka Connect started" once it has joined the group and received its first assignment (tests and scripts
// wait for those lines); runs until SIGTERM or SIGINT and exits 0 after stopping its work and leaving the
// group. No worker properties exits 1; a bad worker config exits 2 with one line saying why; a herder that fails later (its group refused at a
// rebalance) stops the worker and exits 1, as Kafka's DistributedHerder does.

import { startDistributed } from '../connect/runtime/distributed/distributed.js';
import { runWorker } from './connect-worker.js';

const USAGE = 'usage: brook connect-distributed [-daemon] worker.properties\n';

export function runConnectDistributed(args: string[]): Promise<number> {
  return runWorker(
    {
      command: 'connect-distributed',
      usage: USAGE,
      // Kafka's ConnectDistributed takes no other arguments and ignores any given.
      fileCount: (n) => n >= 1,
      load: (workerProps) => workerProps,
      start: (props, sink) => startDistributed(props, sink),
      // A task client still closing in the background (a sink consumer leaving a group that waits in a
      // rebalance for a dead member) must not hold the process: everything that needed an orderly end has had it.
      exitGraceMs: 2000,
    },
    args,
  );
}
