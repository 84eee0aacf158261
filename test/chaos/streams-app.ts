// One instance of the chaos harness's Kafka Streams application (`--workload streams`), run as its own process so
// that the harness can kill it with SIGKILL and start it again on the same state directory. Topology: the input
// topic grouped by its key (no repartition: the producers keep each key on one partition), counted in a
// persistent store (so it has a changelog), each new count written to the output topic as "<key>=<count>".
// exactly_once_v2, no record cache: every input record makes exactly one output record, so the checker
// (checker-streams.ts) can demand each key's counts 1, 2, ..., n in the read_committed output.
// Settings from the environment: BOOTSTRAP, STATE_DIR, APP_ID, INPUT, OUTPUT, NAME (for the log), and
// CHAOS_STREAMS_GUARANTEE=at_least_once (inherited from the harness's environment) to see the checker find the
// duplicates at-least-once makes after a kill. It logs with
// timestamps to stdout (the harness sends it to the run's logs/), exits 1 when the client reaches ERROR, and on
// SIGTERM closes cleanly (commit, checkpoints, leaving the group) and exits 0.

import { createLogger } from '../../src/common/logger.js';
import {
  Consumed,
  KafkaStreams,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
} from '../../src/streams/index.js';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

const name = process.env.NAME ?? 'streams';
const log = (line: string) => console.log(`${new Date().toISOString()} ${name} ${line}`);

const builder = new StreamsBuilder();
builder
  .stream(required('INPUT'), Consumed.with(Serdes.String(), Serdes.String()))
  .groupByKey()
  .count(Materialized.as('counts'))
  .toStream()
  .mapValues((count, key) => `${key}=${count}`)
  .to(required('OUTPUT'), Produced.with(Serdes.String(), Serdes.String()));

const streams = new KafkaStreams(builder.build(), {
  'application.id': required('APP_ID'),
  'bootstrap.servers': required('BOOTSTRAP'),
  'state.dir': required('STATE_DIR'),
  'processing.guarantee':
    process.env.CHAOS_STREAMS_GUARANTEE === 'at_least_once' ? 'at_least_once' : 'exactly_once_v2',
  // No record cache (both keys, the older one too): each update of a count goes out.
  'statestore.cache.max.bytes': 0,
  'cache.max.bytes.buffering': 0,
  'replication.factor': 3,
  'session.timeout.ms': 10_000,
  'heartbeat.interval.ms': 1_000,
});
streams.setLogger(log);
// The threads' group membership (joins, syncs, heartbeat errors) goes to the instance's log too.
streams.setClientLogger(createLogger('client', 'debug', log));
streams.setStateListener((next, previous) => {
  log(`state ${previous} -> ${next}`);
  if (next === 'ERROR') process.exit(1);
});
process.on('SIGTERM', () => {
  log('SIGTERM: closing');
  void streams.close().then(() => {
    log(`closed; restored ${streams.restoredRecords()} changelog records since start`);
    process.exit(0);
  });
});
log(`starting, pid ${process.pid}`);
await streams.start();
// start() creates the internal topics and starts the threads: a start that hangs shows as this line missing.
log('start() returned');
