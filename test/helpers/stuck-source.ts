// A source connector whose start() does not return until the test releases it, loaded from plugin.path (a folder
// with a module re-exporting this compiled file, as counting-source.ts is): a connector waiting for an external
// system that does not answer. Its task produces nothing.

import { ConfigDef, SourceConnector, SourceTask, type TaskConfig } from '../../src/connect/index.js';

let releaseStart: () => void = () => {};
let started = new Promise<void>((resolve) => {
  releaseStart = resolve;
});

/** Lets every start() waiting now (and later) return. */
export function releaseStuckStarts(): void {
  releaseStart();
  started = Promise.resolve();
}

export class StuckSourceConnector extends SourceConnector {
  static readonly className = 'test.StuckSourceConnector';

  version(): string {
    return '1.0';
  }

  async start(): Promise<void> {
    await started;
  }

  taskClass() {
    return StuckSourceTask;
  }

  taskConfigs(): TaskConfig[] {
    return [{}];
  }

  stop(): void {}

  config(): ConfigDef {
    return new ConfigDef();
  }
}

export class StuckSourceTask extends SourceTask {
  version(): string {
    return '1.0';
  }

  start(): void {}

  async poll(): Promise<null> {
    await new Promise((r) => setTimeout(r, 100));
    return null;
  }

  stop(): void {}
}
