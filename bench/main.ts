// `npm run bench -- <name> [args]`: runs one named benchmark; with no name, lists them. Each benchmark is a
// module exporting `run(args: string[]): Promise<void>`, loaded only when chosen so that one benchmark's
// dependencies (or its unfinished state) never affect another.

/** What a benchmark module exports. */
type BenchmarkModule = { run(args: string[]): Promise<void> };

/** Every benchmark, by name: a one-line description and the import of its module. Add one with one line. */
const benchmarks: Record<string, [about: string, load: () => Promise<BenchmarkModule>]> = {
  limits: ['ceilings of this machine: disk sync and async, loopback TCP', () => import('./limits/main.js')],
  'codec-messages': ['generated codecs on produce and fetch', () => import('./codec/messages.js')],
  'codec-records': ['record batches on produce and fetch', () => import('./codec/records.js')],
  'record-walk-ab': [
    'the record walk and decoder of this build vs another build, alternating in one process',
    () => import('./codec/record-walk-ab.js'),
  ],
  'produce-prepare-ab': [
    "the leader's preparation of a producer's batch, per codec, of this build vs another build, alternating",
    () => import('./codec/produce-prepare-ab.js'),
  ],
  broker: ['broker matrix with G1: produce and fetch, vs limits', () => import('./broker/main.js')],
  'fetch-backlog': [
    'a consumer catching up a 1 GiB backlog vs L_read of the same segment files',
    () => import('./broker/backlog.js'),
  ],
  'broker-scale': [
    '10,000 partitions and 10,000 idle connections: memory each, produce beside them vs a bare broker',
    () => import('./broker/scale.js'),
  ],
  cluster: [
    'rf=3 produce vs single node, leader failover, 3 brokers on ZooKeeper',
    () => import('./cluster/main.js'),
  ],
  'network-echo': ['network layer with an echo handler, vs bare Node', () => import('./network/echo.js')],
  'storage-append': [
    'log appends at D0 and D1, vs L_disk_async and L_disk_sync loops',
    () => import('./storage/append.js'),
  ],
  'storage-read': ['log reads (read and readAsync) vs a plain read loop', () => import('./storage/read.js')],
  'storage-footprint': [
    'memory per open partition (10,000), open time, recovery of 1 GiB',
    () => import('./storage/footprint.js'),
  ],
  'storage-encryption': [
    'append and fetch, encrypted at rest vs plaintext',
    () => import('./storage/encryption.js'),
  ],
  'storage-compaction': [
    'one compaction pass, MB/s vs L_disk_async',
    () => import('./storage/compaction.js'),
  ],
  'security-tls': [
    'produce and fetch over SSL and SASL_SSL vs PLAINTEXT, authentications per second',
    () => import('./security/tls-throughput.js'),
  ],
  'acl-produce': [
    'produce throughput with the ACL authorizer and 10,000 ACLs vs without',
    () => import('./security/acl-produce.js'),
  ],
  connect: [
    'FileStreamSource vs the plain producer, PostgreSQL sink vs batched INSERTs',
    () => import('./connect/throughput.js'),
  ],
  mirror: [
    'MirrorMaker 2 copying a topic vs plain consume-and-produce between two brokers',
    () => import('./connect/mirror.js'),
  ],
  'mirror-trace': [
    'one MirrorMaker copy traced stage by stage (poll, window, requests)',
    () => import('./connect/mirror-trace.js'),
  ],
  coordinator: ['50-member rebalance and offset commits per second', () => import('./coordinator/groups.js')],
  'client-produce': [
    'Brook client vs kafkajs, @platformatic/kafka and kcat producing',
    () => import('./client/produce.js'),
  ],
  quota: [
    'a producer under producer_byte_rate beside an unthrottled one (issue 15)',
    () => import('./quota/main.js'),
  ],
  'client-consume': [
    'Brook client vs kafkajs, @platformatic/kafka and kcat consuming',
    () => import('./client/consume.js'),
  ],
  streams: [
    'Brook Streams stateless and count topologies vs raw consume-produce',
    () => import('./streams/throughput.js'),
  ],
  'streams-restore': [
    'Brook Streams state restoration vs reading the changelog raw',
    () => import('./streams/restore.js'),
  ],
  'streams-threads': [
    'Brook Streams with 1 and 2 stream threads in worker threads (records/s, ratio)',
    () => import('./streams/threads.js'),
  ],
};

function list(): string {
  const names = Object.keys(benchmarks).sort();
  const width = Math.max(...names.map((name) => name.length));
  const lines = names.map((name) => `  ${name.padEnd(width)}  ${benchmarks[name]![0]}`);
  const header = 'usage: npm run bench -- <name> [args]   (each takes --help)';
  return [header, '', 'benchmarks:', ...lines].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    console.log(list());
    return 0;
  }
  const benchmark = Object.hasOwn(benchmarks, name) ? benchmarks[name] : undefined;
  if (benchmark === undefined) {
    console.error(`no benchmark named '${name}'\n\n${list()}`);
    return 2;
  }
  const { run } = await benchmark[1]();
  await run(args);
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  console.error(error);
  process.exitCode = 1;
}
