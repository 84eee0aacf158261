// A standalone Connect worker: the worker config, the plugins (built-in and plugin.path), the file offset store,
// the standalone herder and the REST server, started together and stopped together. Used by
// `brook connect-standalone` and by tests that run a worker in-process.

import { hostname } from 'node:os';
import type { LogSink } from '../../common/logger.js';
import { workerPlugins } from './builtin-plugins.js';
import { CONNECT_LOGGERS, Loggers } from './loggers.js';
import { FileOffsetStore } from './offset-store.js';
import { RestServer, type RestServerOptions } from './rest-server.js';
import { StandaloneHerder } from './standalone-herder.js';
import { Worker } from './worker.js';
import { corsPolicyOf, loadWorkerConfig, responseHeadersOf, topicTrackingOf } from './worker-config.js';

export interface StandaloneWorker {
  readonly herder: StandaloneHerder;
  readonly restUrl: string;
  readonly workerId: string;
  /** The worker's loggers and their levels (/admin/loggers). */
  readonly loggers: Loggers;
  stop(): Promise<void>;
}

export async function startStandalone(
  props: Record<string, string>,
  /** Where the worker's formatted lines go (the command's stderr; tests keep them). */
  sink: LogSink = (line) => process.stderr.write(`${line}\n`),
  restOptions: RestServerOptions = {},
): Promise<StandaloneWorker> {
  const config = loadWorkerConfig(props, 'standalone');
  const loggers = new Loggers(sink);
  const plugins = await workerPlugins(config, loggers.logger(CONNECT_LOGGERS.plugins));
  const offsets = new FileOffsetStore(config.parsed['offset.storage.file.filename'] as string);
  let workerId = '';
  const worker = new Worker({
    get workerId() {
      return workerId;
    },
    config,
    plugins,
    offsets,
    loggers,
  });
  const herder = new StandaloneHerder(worker);
  const rest = new RestServer(herder, loggers.logger(CONNECT_LOGGERS.restServer), config.restTls, {
    topicTracking: topicTrackingOf(config),
    cors: corsPolicyOf(config),
    responseHeaders: responseHeadersOf(config),
    ...restOptions,
  });
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
    loggers,
    async stop() {
      await herder.stop();
      await worker.close();
      await rest.stop();
    },
  };
}
