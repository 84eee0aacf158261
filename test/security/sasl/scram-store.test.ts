// SCRAM credentials in Kafka's ZooKeeper layout: /config/users/<sanitized user> holds every mechanism's credential,
// and each write comes with Kafka's /config/changes/config_change_N notification ({"version":2,
// "entity_path":"users/<user>"}) in the same multi, so that anything watching Kafka's layout learns of it.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { InProcessStore } from '../../../src/controller/store/in-process-store.js';
import type { ScramCredential } from '../../../src/security/sasl/scram-credential.js';
import { ScramCredentialStore } from '../../../src/security/sasl/scram-store.js';

function credential(iterations: number): ScramCredential {
  return { salt: randomBytes(16), storedKey: randomBytes(32), serverKey: randomBytes(32), iterations };
}

test('each credential write updates /config/users/<user> and adds a users/<user> change notification', async () => {
  const session = InProcessStore.open({ dataDir: null }).openSession();
  const store = new ScramCredentialStore(session);
  const notifications = async () => {
    const children = await session.children('/config/changes');
    assert.ok(children.ok);
    const out = [];
    for (const name of [...children.value].sort()) {
      assert.match(name, /^config_change_\d{10}$/);
      const node = await session.get(`/config/changes/${name}`);
      assert.ok(node.ok);
      out.push(JSON.parse(Buffer.from(node.value.data).toString('utf8')));
    }
    return out;
  };
  const userDoc = async (path: string) => {
    const node = await session.get(path);
    assert.ok(node.ok);
    return JSON.parse(Buffer.from(node.value.data).toString('utf8'));
  };

  assert.equal(await store.update('alice', 'SCRAM-SHA-256', credential(4096)), true);
  assert.deepEqual(await notifications(), [{ version: 2, entity_path: 'users/alice' }]);
  assert.equal(await store.update('alice', 'SCRAM-SHA-512', credential(8192)), true);
  const doc = await userDoc('/config/users/alice');
  assert.deepEqual(Object.keys(doc.config).sort(), ['SCRAM-SHA-256', 'SCRAM-SHA-512']);
  assert.match(doc.config['SCRAM-SHA-512'], /iterations=8192$/);
  // A user name Kafka sanitizes is named sanitized in both places.
  assert.equal(await store.update('bob@example.com', 'SCRAM-SHA-256', credential(4096)), true);
  assert.equal(await store.update('alice', 'SCRAM-SHA-256', null), true);
  assert.equal(await store.update('alice', 'SCRAM-SHA-256', null), false, 'nothing to remove: no write');
  const all = await notifications();
  assert.deepEqual(
    all.map((n: { entity_path: string }) => n.entity_path),
    ['users/alice', 'users/alice', 'users/bob%40example.com', 'users/alice'],
  );
  assert.deepEqual(Object.keys((await userDoc('/config/users/alice')).config), ['SCRAM-SHA-512']);
  assert.deepEqual(await store.describe('bob@example.com'), [
    { mechanism: 'SCRAM-SHA-256', iterations: 4096 },
  ]);
});
