// A single message transform for tests, loaded through plugin.path as a connector author's package would be: it
// throws RetriableException for its first `failures` records (per instance), then passes records on unchanged.
// The worker's error handler decides what a failure means: retried within errors.retry.timeout, the task failed
// with errors.tolerance=none, the record skipped with all.

import { ConfigDef, RetriableException } from '../../src/connect/index.js';
import type { Transformation } from '../../src/connect/transforms/transformation.js';

export class FlakyTransform implements Transformation {
  static readonly pluginType = 'transformation';
  static readonly className = 'com.example.FlakyTransform';
  private failuresLeft = 0;

  version(): string {
    return '1.0.0';
  }

  configure(props: Readonly<Record<string, string>>): void {
    this.failuresLeft = Number(props.failures ?? '0');
  }

  apply<R>(record: R): R {
    if (this.failuresLeft > 0) {
      this.failuresLeft--;
      throw new RetriableException(`flaky: ${this.failuresLeft} failures left`);
    }
    return record;
  }

  config(): ConfigDef {
    return new ConfigDef().define({
      name: 'failures',
      type: 'INT',
      defaultValue: 0,
      importance: 'LOW',
      documentation: 'How many records fail (RetriableException) before records pass',
    });
  }

  close(): void {}
}
