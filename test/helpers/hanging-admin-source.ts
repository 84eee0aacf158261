// A source connector whose stop() closes an admin client with a call still in progress against a cluster that
// never answers (`hang.bootstrap.servers`; the call ends at `hang.api.timeout.ms`), as MirrorMaker's connectors close theirs (Kafka's Utils.closeQuietly:
// Admin.close() without a timeout, which waits for the call until its default.api.timeout.ms). Loaded from
// plugin.path, as stuck-source.ts is. Its task produces nothing.

import { Admin } from '../../src/client/index.js';
import { ConfigDef, SourceConnector, SourceTask, type TaskConfig } from '../../src/connect/index.js';

export class HangingAdminSourceConnector extends SourceConnector {
  static readonly className = 'test.HangingAdminSourceConnector';
  private admin: Admin | null = null;

  version(): string {
    return '1.0';
  }

  start(props: Record<string, string>): void {
    this.admin = new Admin({
      bootstrapServers: props['hang.bootstrap.servers']!,
      defaultApiTimeoutMs: Number(props['hang.api.timeout.ms'] ?? 15_000),
    });
    this.admin.listTopics().catch(() => {});
  }

  taskClass() {
    return HangingAdminSourceTask;
  }

  taskConfigs(): TaskConfig[] {
    return [];
  }

  async stop(): Promise<void> {
    await this.admin?.close();
  }

  config(): ConfigDef {
    return new ConfigDef();
  }
}

export class HangingAdminSourceTask extends SourceTask {
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
