// `brook` command dispatcher: each subcommand lives in its own module and is loaded on demand.

const USAGE = `usage: brook <command> [options]

commands:
  server      run a broker (see --help)
  zookeeper   start, stop or check a local ZooKeeper for development (start|stop|status)
  cluster     start or stop a local ZooKeeper and brokers for development (up|down|status)
`;

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  server: async () => (await import('./server.js')).runServer,
  zookeeper: async () => (await import('./zookeeper.js')).runZookeeperCommand,
  cluster: async () => (await import('./cluster.js')).runClusterCommand,
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
