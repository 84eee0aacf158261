// Single message transforms and predicates (Kafka's Transformation and Predicate): a transform maps one record
// to one record or to null (dropped); a predicate decides whether a transform applies. Both are configured with
// the keys under `transforms.<alias>.` / `predicates.<alias>.` of the connector config.

import type { ConfigDef } from '../api/config-def.js';
import type { ConnectRecord } from '../api/records.js';

// biome-ignore lint/suspicious/noExplicitAny: transforms work on source and sink records alike.
export type AnyRecord = ConnectRecord<any>;

export interface Transformation {
  configure(props: Readonly<Record<string, string>>): void;
  apply<R extends AnyRecord>(record: R): R | null;
  config(): ConfigDef;
  close(): void;
}

export interface Predicate {
  configure(props: Readonly<Record<string, string>>): void;
  test(record: AnyRecord): boolean;
  config(): ConfigDef;
  close(): void;
}

export type TransformationClass = new () => Transformation;
export type PredicateClass = new () => Predicate;

/** One configured step: the transform, and the predicate (negated or not) that gates it. */
export interface TransformStep {
  alias: string;
  transform: Transformation;
  predicate: Predicate | null;
  negate: boolean;
}

export class TransformChain {
  constructor(readonly steps: readonly TransformStep[]) {}

  apply<R extends AnyRecord>(record: R): R | null {
    let r: R | null = record;
    // Indexed, not for-of: this runs per record, and an iterator per call was garbage even with no steps.
    for (let i = 0; i < this.steps.length; i++) {
      const step = this.steps[i]!;
      if (r === null) return null;
      if (step.predicate !== null && step.predicate.test(r) === step.negate) continue;
      r = step.transform.apply(r);
    }
    return r;
  }

  close(): void {
    for (const s of this.steps) {
      s.transform.close();
      s.predicate?.close();
    }
  }
}
