// Truncating a Streams changelog in a test, as an operator would have to: Kafka (and Brook) refuse DeleteRecords on
// a topic whose cleanup.policy lacks "delete" (POLICY_VIOLATION), and changelogs are created "compact". So the
// policy becomes "compact,delete" first (retention.ms stays at Streams' default, so nothing else is removed).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Admin } from '../../src/client/admin.js';

/** Deletes the records of partition 0 of the compacted `topic` before `offset`; resolves with the new low mark. */
export async function truncateChangelog(admin: Admin, topic: string, offset: number): Promise<number> {
  const [altered] = await admin.incrementalAlterConfigs([
    { type: 'topic', name: topic, ops: [{ name: 'cleanup.policy', op: 'set', value: 'compact,delete' }] },
  ]);
  assert.equal(altered!.error, null, `cleanup.policy of ${topic}`);
  const [deleted] = await admin.deleteRecords([{ topic, partition: 0, offset }]);
  assert.equal(deleted!.error, null, `records of ${topic} before ${offset}`);
  return deleted!.lowWatermark;
}

/**
 * As truncateChangelog, synchronously, in a child process: for a restore listener, whose callbacks must do their
 * work before the restoration goes on.
 */
export function truncateChangelogNow(bootstrap: string, topic: string, offset: number): void {
  const helper = fileURLToPath(import.meta.url);
  const admin = fileURLToPath(new URL('../../src/client/admin.js', import.meta.url));
  const script =
    `import { Admin } from ${JSON.stringify(admin)};` +
    `import { truncateChangelog } from ${JSON.stringify(helper)};` +
    `const a = new Admin({ bootstrapServers: ${JSON.stringify(bootstrap)} });` +
    `try { await truncateChangelog(a, ${JSON.stringify(topic)}, ${offset}); } finally { await a.close(); }`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
}
