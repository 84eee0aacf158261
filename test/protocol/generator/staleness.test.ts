// Fails when the committed generated codecs differ from what the generator produces from the specifications.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GENERATED_MARKER } from '../../../src/protocol/generator/emit-files.js';
import { formatFiles } from '../../../src/protocol/generator/format.js';
import { GENERATED_FOLDERS, generateFiles } from '../../../src/protocol/generator/generate.js';
import { repositoryRoot, specDirectory } from '../../../src/protocol/generator/spec-reader.js';

describe('committed generated codecs', () => {
  const root = repositoryRoot();
  const files = formatFiles(generateFiles(specDirectory()), root);

  it('match what the generator produces now (run `npm run generate` if this fails)', () => {
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

  it('carry the generated marker, and no generated file is left over from older specifications', () => {
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
});
