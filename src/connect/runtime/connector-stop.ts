// How a herder waits for a connector instance to stop, as Kafka 3.9's Worker.awaitStopConnectors: at most
// CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT_MS, then it logs that the connector is unresponsive and goes on (Kafka cancels
// the WorkerConnector and leaves its stop running on the connector's thread). A connector's stop may wait on its
// own clients: MirrorMaker's close their admins without a timeout (Utils.closeQuietly, Admin.close()), which waits
// for a call in progress up to default.api.timeout.ms; without this bound a delete, a rebalance or a shutdown would
// wait with it. Stateless; each herder calls it for each instance it stops.

import { settleWithin } from '../../common/deadline.js';
import type { Logger } from '../../common/logger.js';
import type { Connector } from '../api/connector.js';
import { traceOf } from './status.js';

/** Kafka's Worker.CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT_MS: fixed, not a worker setting. */
export const CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 5_000;

/**
 * Stops `instance`, waiting at most `timeoutMs`. A stop that throws is logged; one still running at the bound is
 * logged as unresponsive (Kafka's error) and left to finish (its late failure is logged too). Never throws.
 */
export async function stopConnectorWithin(
  name: string,
  instance: Connector,
  log: Logger,
  timeoutMs = CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
): Promise<void> {
  const failed = (err: unknown): void => log.error(`Connector ${name} failed to stop: ${traceOf(err)}`);
  // A stop that throws, at once or later, is logged when it does; past the bound the herder goes on without it.
  const stopping = (async () => instance.stop())().catch(failed);
  try {
    await settleWithin(stopping, timeoutMs, () => new Error('connector stop timed out'));
  } catch {
    log.error(
      `Connector '${name}' did not stop within ${timeoutMs} ms and is unresponsive: the worker goes on without ` +
        'waiting, and the connector may hold external resources until its stop ends or the worker restarts.',
    );
  }
}
