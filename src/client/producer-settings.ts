// The producer's settings as resolved once at construction: Kafka's defaults filled in and Kafka's rules between
// keys checked (KafkaProducer's configure* steps), so that the accumulator and the sender read plain numbers and
// never re-derive a default.
//
// Ownership: one object per producer, made by the Producer and shared, by reference, with its RecordAccumulator
// and Sender; nothing changes it after construction.

import { compressionTypeFromName } from '../protocol/compression/compression-type.js';
import { ConfigError } from './errors.js';
import type { ResolvedClientOptions } from './options.js';
import type { ProducerOptions } from './producer.js';

/**
 * The longest delay a Node timer takes (2^31 - 1 ms, 24.8 days), which is Java's Integer.MAX_VALUE: what Kafka
 * Connect and Kafka Streams give delivery.timeout.ms (and Connect max.block.ms, Long.MAX_VALUE there) to mean
 * "never expire".
 */
export const PRODUCER_TIMEOUT_MS_MAX = 0x7fffffff;

/** The producer's keys with their values in use (Kafka's names in camelCase). */
export interface ProducerSettings {
  /** acks as a number: 0, 1 or -1 (all). */
  acks: number;
  lingerMs: number;
  batchSize: number;
  bufferMemory: number;
  maxBlockMs: number;
  maxRequestSize: number;
  /** The compression codec's attribute value. */
  compression: number;
  compressionLevel: number | undefined;
  idempotent: boolean;
  transactional: boolean;
  deliveryTimeoutMs: number;
  ackTimeoutMs: number;
  /** max.in.flight.requests.per.connection, applied per partition. */
  maxInFlightPerPartition: number;
  retries: number;
}

/** Resolves `options` into settings, or throws ConfigError where Kafka's producer refuses the combination. */
export function resolveProducerSettings(
  options: ProducerOptions<unknown, unknown>,
  client: ResolvedClientOptions,
): ProducerSettings {
  const acksOption = options.acks ?? 'all';
  const acks = acksOption === 'all' ? -1 : acksOption;
  if (![0, 1, -1].includes(acks)) throw new ConfigError(`acks must be 0, 1, -1 or 'all', not ${acksOption}`);
  if (options.idempotent === true && acks !== -1) {
    throw new ConfigError('an idempotent producer needs acks=all');
  }
  const transactional = options.transactionalId !== undefined;
  // Kafka's rule (ProducerConfig.postProcessAndValidateIdempotenceConfigs): retries=0 turns the default idempotence
  // off, and is refused with idempotence asked for, or a transactional.id, which needs it.
  const noRetries = options.retries === 0;
  if (noRetries && options.idempotent === true)
    throw new ConfigError('Must set retries to non-zero when using the idempotent producer.');
  if (noRetries && transactional)
    throw new ConfigError('Cannot set a transactional.id without also enabling idempotence.');
  if (transactional) {
    // Kafka's rule: a transactional producer is idempotent; turning idempotence off is a configuration error.
    if (options.idempotent === false) {
      throw new ConfigError('a transactional producer needs enable.idempotence (idempotent: true)');
    }
    if (acks !== -1) throw new ConfigError('a transactional producer needs acks=all');
    if (options.transactionalId === '') throw new ConfigError('transactional.id must not be empty');
  }
  const idempotent = transactional || (options.idempotent ?? (acks === -1 && !noRetries));
  const lingerMs = options.lingerMs ?? 5;
  const codec = compressionTypeFromName(options.compression ?? 'none');
  if (codec === undefined) throw new ConfigError(`unknown compression '${options.compression}'`);
  // Kafka's rule (KafkaProducer.configureDeliveryTimeout): a record gets at least linger.ms and one request's
  // time before it can expire. A value given below that is a configuration error; the default is raised.
  const lingerAndRequestTimeoutMs = lingerMs + client.requestTimeoutMs;
  const deliveryTimeoutMs = options.deliveryTimeoutMs ?? 120_000;
  if (deliveryTimeoutMs < lingerAndRequestTimeoutMs) {
    if (options.deliveryTimeoutMs !== undefined) {
      throw new ConfigError(
        `delivery.timeout.ms (${deliveryTimeoutMs}) should be equal to or larger than linger.ms + ` +
          `request.timeout.ms (${lingerMs} + ${client.requestTimeoutMs})`,
      );
    }
    client.logger?.warn('delivery.timeout.ms raised to linger.ms + request.timeout.ms', {
      deliveryTimeoutMs: lingerAndRequestTimeoutMs,
    });
  }
  const maxInFlightPerPartition = client.maxInFlightRequestsPerConnection;
  if (idempotent && maxInFlightPerPartition > 5) {
    throw new ConfigError('an idempotent producer allows at most 5 requests in flight per connection');
  }
  return {
    acks,
    lingerMs,
    batchSize: options.batchSize ?? 16_384,
    bufferMemory: options.bufferMemory ?? 32 * 1024 * 1024,
    maxBlockMs: options.maxBlockMs ?? 60_000,
    maxRequestSize: options.maxRequestSize ?? 1024 * 1024,
    compression: codec,
    compressionLevel: options.compressionLevel,
    idempotent,
    transactional,
    deliveryTimeoutMs: Math.max(deliveryTimeoutMs, lingerAndRequestTimeoutMs),
    ackTimeoutMs: options.ackTimeoutMs ?? client.requestTimeoutMs,
    maxInFlightPerPartition,
    retries: options.retries ?? 2_147_483_647,
  };
}
