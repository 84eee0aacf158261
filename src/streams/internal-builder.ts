// What StreamsBuilder and the DSL objects share while a topology is built: the Topology being written and the
// counter behind generated names ("KSTREAM-FILTER-0000000001"), consumed in the same order as Kafka's
// InternalStreamsBuilder so that generated names, and so topic and store names, match a Kafka Streams
// application written the same way.

import { Topology } from './topology.js';

export class InternalBuilder {
  readonly topology = new Topology();
  private index = 0;

  newProcessorName(prefix: string): string {
    return `${prefix}${String(this.index++).padStart(10, '0')}`;
  }

  newStoreName(prefix: string): string {
    return `${prefix}STATE-STORE-${String(this.index++).padStart(10, '0')}`;
  }

  /** A user's name when given, else a generated one. */
  nameOr(named: { name: string | null } | null | undefined, prefix: string): string {
    return named?.name ?? this.newProcessorName(prefix);
  }
}
