// The process id is kept in `<state.dir>/<application.id>/kafka-streams-process-metadata` as Kafka Streams 3.x
// keeps it: a restarted instance takes its id (and so its transactional ids) back; a second live instance on
// the same directory gets its own; an unreadable file is replaced.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KafkaStreams, Serdes, StreamsBuilder } from '../../src/streams/index.js';
import { PROCESS_METADATA_FILE } from '../../src/streams/runtime/process-id.js';
import { stateDir } from './streams-helpers.js';

function instance(dir: string): KafkaStreams {
  const builder = new StreamsBuilder();
  builder
    .stream<string, string>('in')
    .mapValues((v) => v.toUpperCase())
    .to('out');
  return new KafkaStreams(builder.build(), {
    'application.id': 'pid-app',
    'bootstrap.servers': '127.0.0.1:1',
    'state.dir': dir,
    'default.key.serde': Serdes.String(),
    'default.value.serde': Serdes.String(),
  });
}

describe('process id', () => {
  it('is saved in the state directory, taken back after a restart, and not shared by two live instances', async () => {
    const dir = stateDir();
    try {
      const first = instance(dir);
      const id = first.processId;
      const file = join(dir, 'pid-app', PROCESS_METADATA_FILE);
      assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { processId: id });
      const second = instance(dir);
      assert.notEqual(second.processId, id, 'a second live instance on the same directory gets its own id');
      await first.close();
      await second.close();
      const restarted = instance(dir);
      assert.equal(restarted.processId, id);
      await restarted.close();
      writeFileSync(file, '{not json');
      const fresh = instance(dir);
      assert.notEqual(fresh.processId, id);
      assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { processId: fresh.processId });
      await fresh.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
