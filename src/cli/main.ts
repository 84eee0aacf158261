// `brook` command dispatcher: each subcommand lives in its own module and is loaded on demand.

const USAGE = `usage: brook <command> [options]

commands:
  server              run a broker (see --help)
  topics              create, list, describe, alter and delete topics (kafka-topics)
  console-producer    produce lines from stdin (kafka-console-producer)
  console-consumer    print records (kafka-console-consumer)
  consumer-groups     list, describe, reset offsets of and delete groups (kafka-consumer-groups)
  configs             describe and alter topic and broker configs (kafka-configs)
  acls                add, list and remove ACLs (kafka-acls)
  delegation-tokens   create, renew, expire and describe delegation tokens (kafka-delegation-tokens)
  get-offsets         earliest, latest or by-time offsets (kafka-get-offsets)
  delete-records      move partitions' log start offsets (kafka-delete-records)
  reassign-partitions move partition replicas between brokers (kafka-reassign-partitions)
  leader-election     preferred or unclean leader election (kafka-leader-election)
  rebalance           plan and apply moves evening out replicas, bytes and leaders (Cruise-Control-like)
  producer-perf-test  produce load and report throughput and latency (kafka-producer-perf-test)
  consumer-perf-test  consume load and report throughput (kafka-consumer-perf-test)
  dump-log            decode segment and index files (kafka-dump-log)
  broker-api-versions API versions every broker supports (kafka-broker-api-versions)
  log-dirs            log directories and partition sizes of brokers (kafka-log-dirs)
  transactions        list, describe and abort transactions (kafka-transactions)
  verifiable-producer produce integers, one JSON event per ack (Kafka's VerifiableProducer)
  verifiable-consumer consume in a group, JSON events per poll and commit (Kafka's VerifiableConsumer)
  zookeeper           start, stop or check a local ZooKeeper for development (start|stop|status)
  cluster             start or stop a local ZooKeeper and brokers for development (up|down|status)
  certs               write a throw-away CA, broker and client certificate for TLS trials
  connect-standalone  run a Kafka Connect worker with its REST API and the given connectors (connect-standalone)
  console             serve the web console (brokers, topics, messages, groups, lag, charts) on 127.0.0.1:9021
  mirror-maker        mirror topics, configs and group offsets between clusters (connect-mirror-maker)
  connect-distributed run a worker of a distributed Kafka Connect cluster (connect-distributed)
  streams-application-reset  reset a Streams application to reprocess its input (kafka-streams-application-reset)
`;

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  server: async () => (await import('./server.js')).runServer,
  topics: async () => (await import('./topics.js')).runTopics,
  'console-producer': async () => (await import('./console-producer.js')).runConsoleProducer,
  'console-consumer': async () => (await import('./console-consumer.js')).runConsoleConsumer,
  'consumer-groups': async () => (await import('./consumer-groups.js')).runConsumerGroups,
  'get-offsets': async () => (await import('./offsets-tools.js')).runGetOffsets,
  'delete-records': async () => (await import('./offsets-tools.js')).runDeleteRecords,
  configs: async () => (await import('./configs.js')).runConfigs,
  acls: async () => (await import('./acls.js')).runAcls,
  'delegation-tokens': async () => (await import('./delegation-tokens.js')).runDelegationTokens,
  'reassign-partitions': async () => (await import('./reassign-partitions.js')).runReassignPartitions,
  'leader-election': async () => (await import('./leader-election.js')).runLeaderElection,
  rebalance: async () => (await import('./rebalance.js')).runRebalance,
  'producer-perf-test': async () => (await import('./perf-tools.js')).runProducerPerfTest,
  'consumer-perf-test': async () => (await import('./perf-tools.js')).runConsumerPerfTest,
  'dump-log': async () => (await import('./dump-log.js')).runDumpLog,
  'broker-api-versions': async () => (await import('./broker-api-versions.js')).runBrokerApiVersions,
  'log-dirs': async () => (await import('./log-dirs.js')).runLogDirs,
  transactions: async () => (await import('./transactions.js')).runTransactions,
  'verifiable-producer': async () => (await import('./verifiable.js')).runVerifiableProducer,
  'verifiable-consumer': async () => (await import('./verifiable.js')).runVerifiableConsumer,
  zookeeper: async () => (await import('./zookeeper.js')).runZookeeperCommand,
  cluster: async () => (await import('./cluster.js')).runClusterCommand,
  certs: async () => (await import('./certs.js')).runCerts,
  'connect-standalone': async () => (await import('./connect-standalone.js')).runConnectStandalone,
  console: async () => (await import('./console.js')).runConsole,
  'mirror-maker': async () => (await import('./mirror-maker.js')).runMirrorMaker,
  'connect-distributed': async () => (await import('./connect-distributed.js')).runConnectDistributed,
  'streams-application-reset': async () =>
    (await import('./streams-application-reset.js')).runStreamsApplicationReset,
};

export function registerCommand(name: string, load: () => Promise<Command>): void {
  commands[name] = load;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return name === undefined ? 1 : 0;
  }
  const load = commands[name];
  if (load === undefined) {
    process.stderr.write(`brook: unknown command '${name}'\n${USAGE}`);
    return 1;
  }
  const run = await load();
  return run(rest);
}
