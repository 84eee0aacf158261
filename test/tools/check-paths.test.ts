// The path check of `npm run lint` (tools/check-paths.mjs), run on small made-up repositories: it must name every
// missing path with the file and line that cite it, and pass what is not a repository path.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const tool = fileURLToPath(new URL('../../../tools/check-paths.mjs', import.meta.url));

function check(files: Record<string, string>): { status: number | null; stderr: string } {
  const root = mkdtempSync(join(tmpdir(), 'brook-paths-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const result = spawnSync(process.execPath, [tool, '--root', root], { encoding: 'utf8' });
    return { status: result.status, stderr: result.stderr };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const tree = {
  'src/store/log.ts':
    '// Appends batches; see src/store/README.md and test/store/log.test.ts.\nexport const x = 1;\n',
  'src/store/index/offset-index.ts': 'export const y = 2;\n',
  'test/store/log.test.ts': "import '../../src/store/log.js';\n",
};

describe('tools/check-paths.mjs', () => {
  it('passes paths that exist, in every form the docs use, and ignores what is not a repository path', () => {
    const { status, stderr } = check({
      ...tree,
      'src/store/README.md': [
        '# store',
        '`log.ts`, `index/offset-index.ts`, `offset-index.ts` and the test `log.test.ts`; see src/store/log.ts,',
        'the compiled `dist/test/store/log.test.js`, znodes like `/brokers/ids/<id>`, `handlers/NN-name.ts`,',
        'a data file `snapshot.json`, https://kafka.apache.org/protocol and `brook/client`;',
        'links [up](../../README.md), [a heading](../../README.md#the-tour-d1-in-kafkas-words) and [here](#store).',
        '```ts',
        "import { x } from './gone.js';",
        '```',
      ].join('\n'),
      'README.md':
        "Start with `src/store/README.md` and `src/store/log.js` (built from its .ts).\n\n## The tour: D1, in Kafka's words\n",
    });
    assert.equal(stderr, '');
    assert.equal(status, 0);
  });

  it('fails on a missing path in a code block, inline code, prose, a link, an anchor and a comment, naming where', () => {
    const { status, stderr } = check({
      ...tree,
      'README.md': 'The tour: `src/store`.\n\n```sh\nnode src/cli/main.ts\n```\n',
      'src/store/README.md':
        'Retention is in `retention.ts`; security in src/security.\nSee [the map](../../MAP.md) and [D2](../../README.md#d2).\n',
      // Built from parts so that the lint check does not read this line as a comment naming a missing file.
      'src/store/cleaner.ts': `export const z = 3; // as ${['src', 'store', 'compaction.ts'].join('/')} does\n`,
    });
    assert.equal(status, 1);
    assert.match(stderr, /^README\.md:4: names src\/cli\/main\.ts, which does not exist$/m);
    assert.match(stderr, /^src\/store\/README\.md:1: names retention\.ts, which does not exist$/m);
    assert.match(stderr, /^src\/store\/README\.md:1: names src\/security, which does not exist$/m);
    assert.match(
      stderr,
      /^src\/store\/cleaner\.ts:1: names src\/store\/compaction\.ts, which does not exist$/m,
    );
    assert.match(stderr, /^src\/store\/README\.md:2: names \.\.\/\.\.\/MAP\.md, which does not exist$/m);
    assert.match(
      stderr,
      /^src\/store\/README\.md:2: names \.\.\/\.\.\/README\.md#d2, which does not exist$/m,
    );
    assert.match(stderr, /6 named path\(s\) missing/);
  });

  it("fails when the top README's tour leaves out a module of src/, and not for a longer name it does give", () => {
    const { status, stderr } = check({
      ...tree,
      'src/stores/x.ts': 'export const w = 4;\n',
      'src/client/y.ts': 'export const v = 5;\n',
      'src/client-tools/z.ts': 'export const u = 6;\n',
      'src/store/README.md': '# store\n',
      'README.md': '| `src/stores` | stores |\n| `src/client-tools` | tools |\n',
    });
    assert.equal(status, 1);
    assert.match(stderr, /^README\.md: the tour does not name the module src\/store$/m);
    assert.match(stderr, /^README\.md: the tour does not name the module src\/client$/m);
    assert.doesNotMatch(stderr, /module src\/stores$/m);
    assert.match(stderr, /2 named path\(s\) missing or module\(s\) not in the README's tour/);
  });
});
