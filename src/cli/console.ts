// `brook console --bootstrap-server HOST:PORT [--port 9021] [--host 127.0.0.1] [--metrics-url URL ...]`: the web
// console (src/console) on http://127.0.0.1:9021 by default, speaking to the cluster with the client settings of
// --command-config (security.protocol, ssl.*, sasl.*), as Kafka's tools do. Prints "console listening at URL" once
// it serves (tests and scripts wait for that line); runs until SIGTERM or SIGINT and exits 0 after stopping.

import { WebConsole } from '../console/web-console.js';
import { UsageError } from './args.js';
import { clientOptions, out, runTool } from './client-tool.js';

export function runConsole(argv: string[]): Promise<number> {
  return runTool(
    {
      name: 'console',
      summary:
        'Serve the web console: brokers, topics, messages, groups and lag, live charts, ACLs and quotas.',
      specs: {
        port: { value: true, help: 'HTTP port to serve on (default 9021; 0: any free port)' },
        host: {
          value: true,
          help: 'address to bind (default 127.0.0.1; the console has no login of its own)',
        },
        'metrics-url': {
          value: true,
          repeat: true,
          help: "a broker's Prometheus endpoint (http://host:9404/metrics) for the charts; repeat for each broker",
        },
        'timeout-ms': {
          value: true,
          help: 'bound of each call to the cluster before the page shows an error (15000)',
        },
      },
      run: async (args) => {
        const port = args.int('port', 9021)!;
        if (port < 0 || port > 65535) throw new UsageError(`--port ${port} is not a port`);
        const timeoutMs = args.int('timeout-ms', 15_000)!;
        if (timeoutMs < 1000) throw new UsageError('--timeout-ms must be at least 1000');
        const metricsUrls = args
          .all('metrics-url')
          .flatMap((u) => u.split(','))
          .filter((u) => u !== '');
        for (const url of metricsUrls) {
          if (!/^https?:\/\/[^/]+/.test(url))
            throw new UsageError(`--metrics-url ${url} is not an http(s) URL`);
        }
        const web = new WebConsole({
          client: clientOptions(args),
          host: args.get('host') ?? '127.0.0.1',
          port,
          metricsUrls,
          timeoutMs,
        });
        const bound = await web.start();
        const shown = bound.host.includes(':') ? `[${bound.host}]` : bound.host;
        out(`console listening at http://${shown}:${bound.port}/`);
        await new Promise<void>((resolve) => {
          process.once('SIGTERM', resolve);
          process.once('SIGINT', resolve);
        });
        await web.stop();
        return 0;
      },
    },
    argv,
  );
}
