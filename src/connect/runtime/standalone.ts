// A standalone Connect worker: the worker config, the plugins (built-in and plugin.path), the file offset store,
// the standalone herder and the REST server, started together and stopped together. Used by
// `brook connect-standalone` and by tests that run a worker in-process.

import { hostname } from 'node:os';
import { workerPlugins } from './builtin-plugins.js';
import { FileOffsetStore } from './offset-store.js';
import { RestServer, type RestServerOptions } from './rest-server.js';
import { StandaloneHerder } from './standalone-herder.js';
import { Worker } from './worker.js';
import { loadWorkerConfig } from './worker-config.js';

export interface StandaloneWorker {
  readonly herder: StandaloneHerder;
  readonly restUrl: string;
  readonly workerId: string;
  stop(): Promise<void>;
}

export async function startStandalone(
  props: Record<string, string>,
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
  restOptions: RestServerOptions = {},
): Promise<StandaloneWorker> {
  const config = loadWorkerConfig(props, 'standalone');
  const plugins = await workerPlugins(config, log);
  const offsets = new FileOffsetStore(config.parsed['offset.storage.file.filename'] as string);
  let workerId = '';
  const worker = new Worker({
    get workerId() {
      return workerId;
    },
    config,
    plugins,
    offsets,
    log,
  });
  const herder = new StandaloneHerder(worker);
  const rest = new RestServer(herder, log, config.restTls, restOptions);
  const bound = await rest.start(config.restHost, config.restPort);
  const advertisedHost =
    (config.parsed['rest.advertised.host.name'] as string | null) ?? (config.restHost || hostname());
  const advertisedPort = (config.parsed['rest.advertised.port'] as number | null) ?? bound.port;
  workerId = `${advertisedHost}:${advertisedPort}`;
  const scheme = config.restTls === null ? 'http' : 'https';
  const urlHost = config.restHost === '' || config.restHost === '0.0.0.0' ? 'localhost' : config.restHost;
  return {
    herder,
    restUrl: `${scheme}://${urlHost.includes(':') ? `[${urlHost}]` : urlHost}:${bound.port}`,
    workerId,
    async stop() {
      await herder.stop();
      await worker.close();
      await rest.stop();
    },
  };
}
