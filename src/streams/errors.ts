// Brook Streams' errors, named as Kafka Streams names them (the `name` property), so logs read the same.

/** A fatal error of the processing: the thread stops (a FAIL from a handler, a processor's exception). */
export class StreamsError extends Error {
  override name = 'StreamsException';
  /**
   * Kafka's StreamsException.taskId(): the task the error came from ("0_1"), null when it cannot be traced back to
   * one. The thread sets it where Kafka's TaskExecutor and TaskManager do: a task's processing and punctuation, and
   * its commit during a revocation or a close (a periodic commit leaves it null, as Kafka's does).
   */
  taskId: string | null = null;
}

/**
 * Kafka's TaskManager.maybeWrapTaskException: a StreamsError is given the task's id; any other error becomes one,
 * with the error as its cause and, as Java's StreamsException(Throwable), the error's name and message as its own.
 */
export function taskError(e: unknown, taskId: string): StreamsError {
  if (e instanceof StreamsError) {
    e.taskId = taskId;
    return e;
  }
  const wrapped = new StreamsError(String(e), { cause: e });
  wrapped.taskId = taskId;
  return wrapped;
}

/** Kafka's ProcessorStateException: a store that failed to flush (its cache, or itself). */
export class ProcessorStateError extends StreamsError {
  override name = 'ProcessorStateException';
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
