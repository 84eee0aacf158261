// A distributed Connect worker put together: the worker config (distributed keys), the plugins (built-in and
// plugin.path), the offset topic store, the REST server, and the distributed herder, started together (the REST
// server first: its URL is what the worker tells the group) and stopped together. Used by
// `brook connect-distributed` and by tests that run a worker in-process.

import { hostname } from 'node:os';
import type { LogSink } from '../../../common/logger.js';
import { workerPlugins } from '../builtin-plugins.js';
import { CONNECT_LOGGERS, Loggers } from '../loggers.js';
import { RestServer } from '../rest-server.js';
import { Worker } from '../worker.js';
import { corsPolicyOf, loadWorkerConfig, responseHeadersOf, topicTrackingOf } from '../worker-config.js';
import { DistributedHerder, type DistributedHerderFaults } from './distributed-herder.js';
import { internalTopicLogs } from './kafka-based-log.js';
import { TopicOffsetStore } from './topic-offset-store.js';

export interface DistributedWorker {
  readonly herder: DistributedHerder;
  readonly restUrl: string;
  readonly workerId: string;
  /** The worker's loggers and their levels (/admin/loggers). */
  readonly loggers: Loggers;
  /** The herder's fatal error, once its work loop has ended for good (DistributedHerder.failed). */
  readonly failed: Promise<Error>;
  stop(): Promise<void>;
}

export async function startDistributed(
  props: Record<string, string>,
  /** Where the worker's formatted lines go (the command's stderr; tests keep them). */
  sink: LogSink = (line) => process.stderr.write(`${line}\n`),
  faults?: DistributedHerderFaults,
): Promise<DistributedWorker> {
  const config = loadWorkerConfig(props, 'distributed');
  const loggers = new Loggers(sink);
  const plugins = await workerPlugins(config, loggers.logger(CONNECT_LOGGERS.plugins));
  const p = config.parsed;
  // The stores' clients take the worker's own keys, its security keys among them, from the config.
  const logs = internalTopicLogs(config, loggers);
  const offsets = new TopicOffsetStore(logs.offsets());
  let workerId = '';
  const worker = new Worker({
    get workerId() {
      return workerId;
    },
    config,
    plugins,
    offsets,
    loggers,
    openOffsetsTopic(topic, clients) {
      return new TopicOffsetStore(logs.offsets(topic, clients));
    },
  });
  let url = '';
  const herder = new DistributedHerder({
    worker,
    offsets,
    logs,
    faults,
    // Known once the REST server is bound (an ephemeral rest port in tests); read only when the herder starts.
    get url() {
      return url;
    },
  });
  const rest = new RestServer(herder, loggers.logger(CONNECT_LOGGERS.restServer), config.restTls, {
    topicTracking: topicTrackingOf(config),
    cors: corsPolicyOf(config),
    responseHeaders: responseHeadersOf(config),
  });
  const bound = await rest.start(config.restHost, config.restPort);
  const advertisedHost = (p['rest.advertised.host.name'] as string | null) ?? (config.restHost || hostname());
  const advertisedPort = (p['rest.advertised.port'] as number | null) ?? bound.port;
  workerId = `${advertisedHost}:${advertisedPort}`;
  const scheme = config.restTls === null ? 'http' : 'https';
  url = `${scheme}://${advertisedHost.includes(':') ? `[${advertisedHost}]` : advertisedHost}:${advertisedPort}/`;
  const urlHost = config.restHost === '' || config.restHost === '0.0.0.0' ? 'localhost' : config.restHost;
  try {
    await herder.start();
  } catch (err) {
    await herder.stop().catch(() => {});
    await rest.stop();
    throw err;
  }
  return {
    herder,
    restUrl: `${scheme}://${urlHost.includes(':') ? `[${urlHost}]` : urlHost}:${bound.port}`,
    workerId,
    loggers,
    failed: herder.failed,
    async stop() {
      await herder.stop();
      await worker.close();
      await rest.stop();
    },
  };
}
