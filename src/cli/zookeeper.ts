// `brook zookeeper start|stop|status [--port N] [--data-dir D]`: a local ZooKeeper from Debian's package for
// development and tests. start returns once the server serves clients and leaves it running in the background
// with its PID in <data-dir>/zookeeper.pid; stop ends that process by its PID.

import { runningPid, startLocalZooKeeper, stopLocalZooKeeper } from '../controller/store/local-zookeeper.js';
import { registerCommand } from './main.js';

const USAGE = `usage: brook zookeeper start|stop|status [--port N] [--data-dir D]

  start    run ZooKeeper in the background on 127.0.0.1:N (default 2181)
  stop     stop the ZooKeeper started with the same --data-dir
  status   say whether it runs

  --data-dir D   config, pid file, output and data (default data/zookeeper)
`;

const DEFAULT_PORT = 2181;
const DEFAULT_DATA_DIR = 'data/zookeeper';

export function registerZookeeperCommand(): void {
  registerCommand('zookeeper', async () => runZookeeperCommand);
}

interface Parsed {
  readonly action: string;
  readonly port: number;
  readonly dataDir: string;
}

function parse(args: string[]): Parsed | string {
  let action: string | undefined;
  let port = DEFAULT_PORT;
  let dataDir = DEFAULT_DATA_DIR;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--port' || arg === '--data-dir') {
      const next = args[++i];
      if (next === undefined) return `${arg} needs a value`;
      if (arg === '--data-dir') dataDir = next;
      else {
        port = Number(next);
        if (!Number.isInteger(port) || port < 1 || port > 65535) return `bad port '${next}'`;
      }
    } else if (action === undefined && !arg.startsWith('-')) {
      action = arg;
    } else {
      return `unexpected argument '${arg}'`;
    }
  }
  if (action === undefined) return 'say start, stop or status';
  return { action, port, dataDir };
}

export async function runZookeeperCommand(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const parsed = parse(args);
  if (typeof parsed === 'string') {
    process.stderr.write(`brook zookeeper: ${parsed}\n${USAGE}`);
    return 1;
  }
  switch (parsed.action) {
    case 'start':
      try {
        const server = await startLocalZooKeeper({ port: parsed.port, dataDir: parsed.dataDir });
        process.stdout.write(
          `zookeeper running on ${server.connect} (pid ${server.pid}, data in ${server.dataDir})\n`,
        );
        return 0;
      } catch (e) {
        process.stderr.write(`brook zookeeper: ${(e as Error).message}\n`);
        return 1;
      }
    case 'stop': {
      const stopped = await stopLocalZooKeeper(parsed.dataDir);
      process.stdout.write(stopped ? 'zookeeper stopped\n' : `no zookeeper running from ${parsed.dataDir}\n`);
      return 0;
    }
    case 'status': {
      const pid = runningPid(parsed.dataDir);
      process.stdout.write(
        pid === null ? 'zookeeper is not running\n' : `zookeeper is running (pid ${pid})\n`,
      );
      return pid === null ? 3 : 0;
    }
    default:
      process.stderr.write(`brook zookeeper: unknown action '${parsed.action}'\n${USAGE}`);
      return 1;
  }
}
