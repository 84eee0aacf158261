// processing.exception.handler (KIP-1033, Kafka Streams 3.9): what happens to a record whose processing threw.
// A processor's process() that throws, or a punctuator, is reported to the handler with where the record came
// from; CONTINUE drops the record (counted as a dropped record) and the task goes on with the next one, FAIL
// stops the thread with a StreamsException. The task applies it (runtime/task.ts); this module owns the types,
// Kafka's two built-in handlers and the reading of the config value.

import { StreamsConfigError } from './errors.js';
import type { Header, Record } from './processor.js';

/**
 * Kafka's ErrorHandlerContext: the failed record's place. In a punctuation, and below what a punctuator forwards,
 * topic is null and partition and offset -1; `timestamp` is the processor's context's (the record's, or the
 * punctuation's time).
 */
export interface ErrorHandlerContext {
  readonly topic: string | null;
  readonly partition: number;
  readonly offset: number;
  readonly headers: readonly Header[];
  /** The name of the processor node whose process() (or punctuator) threw. */
  readonly processorNodeId: string;
  /** "subtopology_partition", as Kafka's TaskId prints. */
  readonly taskId: string;
  readonly timestamp: number;
}

export type ProcessingHandlerResponse = 'CONTINUE' | 'FAIL';

/**
 * Kafka's ProcessingExceptionHandler.handle: `record` is the record the processor was given, null when a
 * punctuator threw (Kafka passes null there too).
 */
export type ProcessingExceptionHandler = (
  context: ErrorHandlerContext,
  record: Record<unknown, unknown> | null,
  error: Error,
) => ProcessingHandlerResponse;

/** Kafka's LogAndFailProcessingExceptionHandler (the default); the task logs the error. */
export const logAndFailProcessing: ProcessingExceptionHandler = () => 'FAIL';

/** Kafka's LogAndContinueProcessingExceptionHandler; the task logs the error and drops the record. */
export const logAndContinueProcessing: ProcessingExceptionHandler = () => 'CONTINUE';

const BY_NAME: { readonly [name: string]: ProcessingExceptionHandler } = {
  LogAndFailProcessingExceptionHandler: logAndFailProcessing,
  LogAndContinueProcessingExceptionHandler: logAndContinueProcessing,
};

/** The handler of processing.exception.handler: a function, or one of Kafka's by (fully qualified) class name. */
export function processingExceptionHandlerOf(raw: unknown): ProcessingExceptionHandler {
  if (raw === undefined || raw === null) return logAndFailProcessing;
  if (typeof raw === 'function') return raw as ProcessingExceptionHandler;
  const name = String(raw).replace(/^org\.apache\.kafka\.streams\.errors\./, '');
  const handler = Object.hasOwn(BY_NAME, name) ? BY_NAME[name] : undefined;
  if (handler === undefined)
    throw new StreamsConfigError(
      `Invalid value ${String(raw)} for configuration processing.exception.handler: Class ${String(raw)} could not be found.`,
    );
  return handler;
}
