// An in-process broker (no automatic topic creation) and an Admin connected to it, shared by the tests of a
// describe block: started in its `before`, always stopped in its `after`, also when a test or the start fails.
// The admin argument tests (admin-*-arguments) use it.

import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { Admin, type AdminOptions } from '../../src/client/admin.js';
import { type InProcessBroker, startInProcessBroker } from './in-process-broker.js';

export interface AdminSuite {
  readonly broker: InProcessBroker;
  readonly admin: Admin;
}

/** Registers the block's `before` and `after`; the answer's fields are usable from the tests on. */
export function useAdminWithBroker(options: Partial<AdminOptions> = {}): AdminSuite {
  let broker: InProcessBroker | undefined;
  let admin: Admin | undefined;
  before(async () => {
    broker = await startInProcessBroker({ 'auto.create.topics.enable': false });
    admin = new Admin({ bootstrapServers: `127.0.0.1:${broker.port}`, ...options });
  });
  after(async () => {
    await admin?.close({ timeoutMs: 0 });
    await broker?.stop();
  });
  return {
    get broker() {
      assert.ok(broker, 'the broker is used before the suite started it');
      return broker;
    },
    get admin() {
      assert.ok(admin, 'the admin is used before the suite created it');
      return admin;
    },
  };
}
