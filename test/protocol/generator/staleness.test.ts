// Fails when the committed generated codecs differ from what the generator produces from the committed schema,
// and, where Kafka's specifications are at hand (BROOK_KAFKA_SPEC_DIR, or beside the repository), when the
// committed schema differs from what `npm run schema` derives from them.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { derivedSchemaFile, SCHEMA_PATH } from '../../../src/protocol/generator/compact-schema.js';
import { GENERATED_MARKER } from '../../../src/protocol/generator/emit-files.js';
import { formatFiles } from '../../../src/protocol/generator/format.js';
import {
  committedSchema,
  GENERATED_FOLDERS,
  generateFiles,
} from '../../../src/protocol/generator/generate.js';
import { repositoryRoot, specDirectory } from '../../../src/protocol/generator/spec-reader.js';

describe('committed generated codecs', () => {
  const root = repositoryRoot();
  const schema = committedSchema();
  const files = formatFiles(generateFiles(schema), root);

  it('match what the generator produces now from the committed schema (run `npm run generate` if this fails)', () => {
    const stale = files.filter((f) => {
      const path = join(root, f.path);
      return !existsSync(path) || readFileSync(path, 'utf8') !== f.text;
    });
    assert.deepEqual(
      stale.map((f) => f.path),
      [],
    );
    assert.ok(files.length > 90, `only ${files.length} files generated`);
  });

  it('carry the generated marker, and no generated file is left over from an older schema', () => {
    for (const f of files) assert.ok(f.text.startsWith(GENERATED_MARKER), f.path);
    const produced = new Set(files.map((f) => f.path));
    const leftovers: string[] = [];
    for (const folder of GENERATED_FOLDERS) {
      for (const name of readdirSync(join(root, folder))) {
        const path = `${folder}/${name}`;
        if (!name.endsWith('.ts') || produced.has(path)) continue;
        if (readFileSync(join(root, path), 'utf8').startsWith(GENERATED_MARKER)) leftovers.push(path);
      }
    }
    assert.deepEqual(leftovers, []);
  });

  it('come from a schema that says which Kafka it describes and under which license', () => {
    assert.match(schema.source.version, /\d+\.\d+/);
    assert.equal(schema.source.license, 'Apache-2.0');
    assert.ok(schema.messages.some((m) => m.name === 'ProduceRequest' && m.apiKey === 0));
    assert.ok(schema.internal.some((m) => m.name === 'OffsetCommitValue'));
    assert.doesNotMatch(readFileSync(join(root, SCHEMA_PATH), 'utf8'), /"about"|\/\//);
  });

  const specDir = specDirectory();
  it('come from a schema equal to what `npm run schema` derives from Kafka’s specifications', {
    skip: specDir ? false : 'no specifications at hand (set BROOK_KAFKA_SPEC_DIR to check)',
  }, () => {
    const derived = derivedSchemaFile(specDir!, schema.source.version, root);
    assert.ok(
      readFileSync(join(root, SCHEMA_PATH), 'utf8') === derived.text,
      `${SCHEMA_PATH} is stale: run \`npm run schema\``,
    );
  });
});
