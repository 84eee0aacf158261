// `brook server [--config FILE] [--override key=value ...]`: runs one broker until SIGTERM or SIGINT, like
// Kafka's kafka-server-start. Prints "listening on HOST:PORT" for each listener once it serves (tests and
// scripts wait for that line), and exits 0 after a clean shutdown.

import { Broker } from '../broker/broker.js';
import { parseConfigArgs } from '../broker/config/command-line.js';
import { ConfigError } from '../broker/config/config-error.js';
import { loadBrokerConfig } from '../broker/config/load-broker-config.js';
import { systemClock } from '../common/clock.js';
import { createLogger, kafkaLogLevel, runtimeLogLevels } from '../common/logger.js';
import { interBrokerSecurity } from '../security/inter-broker.js';
import { securedListeners } from '../security/listeners.js';
import { listenerSaslSettings } from '../security/sasl/authenticator.js';
import { zooKeeperSaslLogin } from '../security/zookeeper-sasl.js';
import { zooKeeperSecureAcls } from '../security/zookeeper-secure-acls.js';
import { zooKeeperClientTls } from '../security/zookeeper-tls.js';
import { describeStartupFailure } from './startup-failure.js';

/** After a clean shutdown the process ends by itself; if it is still running this much later, say what holds it. */
const LINGER_WARN_MS = 5_000;

const USAGE = 'usage: brook server [--config server.properties] [--override key=value ...]\n';

export async function runServer(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  // One set of run-time levels for every logger of the process, which BROKER_LOGGER resources change (KIP-412).
  const logLevels = runtimeLogLevels();
  const logger = createLogger('brook', logLevels);
  let loaded: Awaited<ReturnType<typeof loadBrokerConfig>>;
  let configPath: string | null = null;
  try {
    const parsed = parseConfigArgs(args);
    configPath = parsed.configPath;
    if (parsed.rest.length > 0) {
      process.stderr.write(`brook server: unexpected arguments: ${parsed.rest.join(' ')}\n${USAGE}`);
      return 2;
    }
    loaded = await loadBrokerConfig({
      configPath: parsed.configPath,
      overrides: parsed.overrides,
      warn: (m) => logger.warn(m),
    });
    // TLS key and trust stores are read now so that a bad path, password or format is a config error.
    securedListeners(loaded.config);
    listenerSaslSettings(loaded.config);
    interBrokerSecurity(loaded.config);
    zooKeeperSecureAcls(loaded.config.values, zooKeeperClientTls(loaded.config.values), zooKeeperSaslLogin());
  } catch (err) {
    // A bad value, or a config file that cannot be read (missing, a directory, not readable): one line.
    if (err instanceof ConfigError) {
      process.stderr.write(`brook server: ${err.message}\n`);
      return 2;
    }
    if (typeof (err as NodeJS.ErrnoException).code === 'string') {
      // readFile's EISDIR carries no path; any other file names itself.
      const path = (err as NodeJS.ErrnoException).path;
      const file = configPath !== null && (path === configPath || path === undefined);
      const what = file ? `cannot read --config ${configPath}: ` : '';
      process.stderr.write(`brook server: ${what}${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
  const broker = new Broker({
    config: loaded.config,
    staticConfig: loaded.staticConfig,
    clock: systemClock,
    logger,
    // A named logger starts with its own level, as Kafka's log4j.properties sets kafka.authorizer.logger's.
    namedLogger: (name, level) => {
      logLevels.set(name, kafkaLogLevel(level));
      return createLogger(name, logLevels);
    },
    logLevels,
    // As Kafka's Exit.halt: no controlled shutdown, since the logs can no longer be written.
    onLogDirFailure: () => process.exit(1),
  });
  const stopped = new Promise<void>((resolve) => {
    let signalled = false;
    const onSignal = (signal: string): void => {
      if (signalled) return;
      signalled = true;
      logger.info(`${signal} received: shutting down`);
      broker.stop().then(resolve, (err: unknown) => {
        logger.error(`shutdown failed: ${err instanceof Error ? err.stack : String(err)}`);
        resolve();
      });
    };
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    process.once('SIGINT', () => onSignal('SIGINT'));
  });
  let bound: Awaited<ReturnType<Broker['start']>>;
  try {
    bound = await broker.start();
  } catch (err) {
    const setting = describeStartupFailure(err, loaded.config, loaded.staticConfig);
    if (setting !== null) logger.error(`broker failed to start: ${setting}`);
    else logger.error(`broker failed to start: ${err instanceof Error ? err.stack : String(err)}`);
    await broker.stop().catch(() => {});
    return setting !== null ? 2 : 1;
  }
  for (const l of bound) {
    process.stdout.write(`Brook broker ${broker.brokerId} listening on ${l.host}:${l.port} (${l.name})\n`);
  }
  await stopped;
  // Nothing should be left to run: a timer or socket still open after stop() is a bug this warning names.
  const linger = setTimeout(() => {
    // Less this timer itself.
    const resources = process.getActiveResourcesInfo();
    resources.splice(resources.indexOf('Timeout'), 1);
    logger.warn(`still running ${LINGER_WARN_MS} ms after shutdown; active: ${resources.join(', ')}`);
  }, LINGER_WARN_MS);
  linger.unref();
  return 0;
}
