// Kafka's config providers in Connect configs: `${file:<path>:<key>}`, `${directory:<dir>:<file>}`, `${env:<VAR>}`
// resolved by the providers `config.providers` names, variables without a value left as written, the providers'
// `allowed.paths` / `allowlist.pattern` params, a worker config resolved when loaded (KIP-421), and the reverse
// transform that keeps resolved secrets out of stored task configs.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ConfigException } from '../../src/connect/errors.js';
import { ConfigTransformer } from '../../src/connect/runtime/config-providers.js';
import { loadWorkerConfig } from '../../src/connect/runtime/worker-config.js';

let dir: string;
let secrets: string;

const PROVIDERS = {
  'config.providers': 'file, directory, env',
  'config.providers.file.class': 'org.apache.kafka.common.config.provider.FileConfigProvider',
  'config.providers.directory.class': 'org.apache.kafka.common.config.provider.DirectoryConfigProvider',
  'config.providers.env.class': 'org.apache.kafka.common.config.provider.EnvVarConfigProvider',
};

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'brook-config-providers-'));
  secrets = join(dir, 'secrets.properties');
  writeFileSync(secrets, 'password = s3cret\nuser: alice\n');
  mkdirSync(join(dir, 'keys'));
  writeFileSync(join(dir, 'keys', 'token'), 'tok-123');
  process.env.BROOK_TEST_PROVIDER_VAR = 'from-env';
});

after(() => {
  delete process.env.BROOK_TEST_PROVIDER_VAR;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

test('file, directory and env variables resolve; the rest stays as written', () => {
  const t = ConfigTransformer.fromConfig(PROVIDERS);
  const out = t.transform({
    ...PROVIDERS,
    jaas: `user="\${file:${secrets}:user}" password="\${file:${secrets}:password}";`,
    token: `\${directory:${join(dir, 'keys')}:token}`,
    fromEnv: `\${env:BROOK_TEST_PROVIDER_VAR}`,
    missingKey: `\${file:${secrets}:nope}`,
    missingVar: `\${env:BROOK_TEST_NOT_SET_ANYWHERE}`,
    otherProvider: `\${vault:secret/x:y}`,
    plain: 'no variables',
  });
  assert.equal(out.jaas, 'user="alice" password="s3cret";');
  assert.equal(out.token, 'tok-123');
  assert.equal(out.fromEnv, 'from-env');
  assert.equal(out.missingKey, `\${file:${secrets}:nope}`);
  assert.equal(out.missingVar, `\${env:BROOK_TEST_NOT_SET_ANYWHERE}`);
  assert.equal(out.otherProvider, `\${vault:secret/x:y}`);
  assert.equal(out.plain, 'no variables');
  assert.equal(out['config.providers'], PROVIDERS['config.providers']);
  // Without config.providers nothing is resolved.
  assert.equal(
    ConfigTransformer.fromConfig({}).transform({ a: `\${env:BROOK_TEST_PROVIDER_VAR}` }).a,
    `\${env:BROOK_TEST_PROVIDER_VAR}`,
  );
});

test('allowed.paths and allowlist.pattern limit what providers return; bad provider settings are config errors', () => {
  const limited = ConfigTransformer.fromConfig({
    ...PROVIDERS,
    'config.providers.file.param.allowed.paths': join(dir, 'keys'),
    'config.providers.env.param.allowlist.pattern': 'OTHER_.*',
  });
  const out = limited.transform({ a: `\${file:${secrets}:user}`, b: `\${env:BROOK_TEST_PROVIDER_VAR}` });
  assert.equal(out.a, `\${file:${secrets}:user}`, 'outside allowed.paths: not read');
  assert.equal(out.b, `\${env:BROOK_TEST_PROVIDER_VAR}`, 'not in the allowlist');
  const allowed = ConfigTransformer.fromConfig({
    ...PROVIDERS,
    'config.providers.file.param.allowed.paths': dir,
  });
  assert.equal(allowed.transform({ a: `\${file:${secrets}:user}` }).a, 'alice');
  assert.throws(
    () =>
      ConfigTransformer.fromConfig({
        'config.providers': 'x',
        'config.providers.x.class': 'com.example.Vault',
      }),
    ConfigException,
  );
  assert.throws(() => ConfigTransformer.fromConfig({ 'config.providers': 'x' }), ConfigException);
  assert.throws(
    () => ConfigTransformer.fromConfig(PROVIDERS).transform({ a: `\${env:/p:K}` }),
    /Path is not supported/,
  );
  assert.throws(
    () => ConfigTransformer.fromConfig(PROVIDERS).transform({ a: `\${file:${join(dir, 'none')}:k}` }),
    ConfigException,
  );
});

test('a worker config resolves its variables when loaded; task configs get their variables back', () => {
  const c = loadWorkerConfig(
    {
      ...PROVIDERS,
      'bootstrap.servers': '127.0.0.1:9092',
      'offset.storage.file.filename': `\${file:${secrets}:user}.offsets`,
    },
    'standalone',
  );
  assert.equal(c.raw['offset.storage.file.filename'], 'alice.offsets');
  const raw = { 'connection.password': `\${file:${secrets}:password}`, topic: 't' };
  const [task] = c.transformer.reverse(raw, [
    { 'connection.password': 's3cret', topic: 't', 'task.id': '0' },
  ]);
  assert.deepEqual(task, { 'connection.password': raw['connection.password'], topic: 't', 'task.id': '0' });
});
