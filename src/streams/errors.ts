// Brook Streams' errors, named as Kafka Streams names them (the `name` property), so logs read the same.

/** A fatal error of the processing: the thread stops (a FAIL from a handler, a processor's exception). */
export class StreamsError extends Error {
  override name = 'StreamsException';
}

/** A configuration value that is missing or wrong. */
export class StreamsConfigError extends Error {
  override name = 'ConfigException';
}

/**
 * No serde was given and none is configured for a value Brook's fallback cannot write (config.ts,
 * unconfiguredSerde). Kafka finds a missing serde when a task initializes its nodes and stores, before any record,
 * so no exception handler is ever asked about it; Brook finds it at the first such record, and lets it pass by the
 * handlers to keep that outcome.
 */
export class MissingSerdeError extends StreamsConfigError {}

/** A topology that cannot be built (a duplicate name, a missing parent or store). */
export class TopologyError extends Error {
  override name = 'TopologyException';
}

/**
 * Kafka's FailedProcessingException: a processor's error that the processing exception handler answered FAIL for
 * (`kafkaMessage` null), or a handler that threw itself ("Fatal user code error in processing error callback").
 * Each parent processor lets it pass up untouched; the task turns it into the StreamsException the thread fails
 * with, the processor's error as its cause.
 */
export class FailedProcessingError extends StreamsError {
  override name = 'FailedProcessingException';

  constructor(
    readonly kafkaMessage: string | null,
    override readonly cause: Error,
  ) {
    super(kafkaMessage ?? cause.message, { cause });
  }
}
