// metric.reporters: Kafka loads each class the list names, at startup (KafkaServer, through
// AbstractConfig.getConfiguredInstances: "Class x cannot be found" stops the broker) and on a dynamic change
// (DynamicMetricsReporters.validateReconfiguration). Brook runs no Java and has its own metrics endpoint
// (brook.metrics.listener): a well-formed class name is accepted and has no effect, as a Kafka server.properties
// naming its reporters must start Brook unchanged; a name no JVM could load (not a Java class name, an empty list
// entry) is refused as Kafka refuses a class it cannot find.

import { splitList } from './value-codec.js';

export const METRIC_REPORTERS = 'metric.reporters';

/** A Java binary class name: dot-separated identifiers (letters, digits, `_` and currency signs such as `$`). */
const JAVA_CLASS_NAME = /^[\p{L}\p{Sc}_][\p{L}\p{Sc}\p{N}_]*(?:\.[\p{L}\p{Sc}_][\p{L}\p{Sc}\p{N}_]*)*$/u;

/** The first entry of a metric.reporters value that no JVM could load as a class, or null when all could be. */
export function unloadableReporter(text: string | undefined): string | null {
  if (text === undefined) return null;
  return splitList(text).find((name) => !JAVA_CLASS_NAME.test(name)) ?? null;
}

/** Kafka's startup refusal of a reporter class it cannot load (AbstractConfig.getConfiguredInstance). */
export function reporterNotFound(name: string): string {
  return `Class ${name} cannot be found`;
}

/**
 * Kafka's refusal of a dynamic change whose reporter classes it cannot load: DynamicBrokerConfig reports the
 * failure of DynamicMetricsReporters' validation without its cause, naming the keys the change updates.
 */
export function reportersChangeRefusal(updatedKeys: string): string {
  const reconfigurable = 'class kafka.server.DynamicMetricsReporters';
  return `Validation of dynamic config update of ${updatedKeys} failed with class ${reconfigurable}`;
}
