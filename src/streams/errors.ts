// Brook Streams' errors, named as Kafka Streams names them (the `name` property), so logs read the same.

/** A fatal error of the processing: the thread stops (a FAIL from a handler, a processor's exception). */
export class StreamsError extends Error {
  override name = 'StreamsException';
}

/** A configuration value that is missing or wrong. */
export class StreamsConfigError extends Error {
  override name = 'ConfigException';
}

/** A topology that cannot be built (a duplicate name, a missing parent or store). */
export class TopologyError extends Error {
  override name = 'TopologyException';
}
