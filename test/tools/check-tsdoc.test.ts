// The TSDoc check of `npm run lint` (tools/check-tsdoc.mjs), run on a small made-up client: every symbol its entry
// exports, through named re-exports, `export *` and renames, needs a /** comment on its declaration, and so does
// every public member of an exported class.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const tool = fileURLToPath(new URL('../../../tools/check-tsdoc.mjs', import.meta.url));

function check(files: Record<string, string>): { status: number | null; stderr: string } {
  const root = mkdtempSync(join(tmpdir(), 'brook-tsdoc-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const result = spawnSync(process.execPath, [tool, '--root', root, 'src/client/index.ts'], {
      encoding: 'utf8',
    });
    return { status: result.status, stderr: result.stderr };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const documented = {
  'src/client/index.ts': [
    "export { Producer, type ProducerOptions } from './producer.js';",
    "export { inner as renamed } from './producer.js';",
    "export * from './serdes.js';",
    '',
  ].join('\n'),
  'src/client/producer.ts': [
    '// A file header is not a doc comment.',
    '',
    '/** Settings. */',
    'export interface ProducerOptions {',
    '  acks?: number;',
    '}',
    '',
    '/**',
    ' * The producer.',
    ' */',
    'export class Producer {',
    '  /** Why it is public. */',
    '  readonly cluster: string;',
    '  private readonly acks = 1;',
    '  protected lingerMs = 5;',
    '  #secret = 0;',
    '',
    '  constructor(options: ProducerOptions) {',
    '    this.cluster = String(options.acks);',
    '  }',
    '',
    '  /** The first overload carries the comment. */',
    '  send(a: string): void;',
    '  send(a: number): void;',
    '  send(_a: string | number): void {',
    '    const inner = { x: 1 };',
    '    void inner;',
    '  }',
    '',
    '  /** The getter carries it for the pair. */',
    '  get state(): string {',
    "    return 'ready';",
    '  }',
    '',
    '  set state(_v: string) {}',
    '',
    '  /** Static members too. */',
    '  static async create(): Promise<Producer> {',
    '    return new Producer({});',
    '  }',
    '',
    '  private helper(): void {}',
    '}',
    '',
    '/** Renamed on export. */',
    'export function inner(): void {}',
    '',
  ].join('\n'),
  'src/client/serdes.ts':
    '/** Bytes. */\nexport const bytesSerde = 1;\n/** Strings. */\nexport type S = string;\n',
};

describe('tools/check-tsdoc.mjs', () => {
  it('passes a client whose every export is documented, however it is re-exported', () => {
    const { status, stderr } = check(documented);
    assert.equal(stderr, '');
    assert.equal(status, 0);
  });

  it('names each undocumented export with its file and line, and fails', () => {
    const { status, stderr } = check({
      ...documented,
      'src/client/producer.ts': documented['src/client/producer.ts']
        .replace('/** Settings. */\n', '// Settings, but a line comment.\n')
        .replace('/** Renamed on export. */\n', ''),
      'src/client/serdes.ts': 'export const bytesSerde = 1;\n/** Strings. */\nexport type S = string;\n',
    });
    assert.equal(status, 1);
    assert.match(stderr, /src\/client\/producer\.ts:4: ProducerOptions has no TSDoc comment/);
    assert.match(stderr, /src\/client\/producer\.ts:\d+: renamed has no TSDoc comment/);
    assert.match(stderr, /src\/client\/serdes\.ts:1: bytesSerde has no TSDoc comment/);
    assert.doesNotMatch(stderr, /Producer has no|\bS has no/);
    assert.match(stderr, /3 of 9 exported symbols/);
  });

  it('names each undocumented public member of an exported class, leaving private ones, constructors and later overloads alone', () => {
    const { status, stderr } = check({
      ...documented,
      'src/client/producer.ts': documented['src/client/producer.ts']
        .replace('  /** Why it is public. */\n', '')
        .replace('  /** The first overload carries the comment. */\n', '  // A line comment is not TSDoc.\n')
        .replace('  /** The getter carries it for the pair. */\n', '')
        .replace('  /** Static members too. */\n', ''),
    });
    assert.equal(status, 1);
    assert.match(stderr, /src\/client\/producer\.ts:\d+: Producer\.cluster has no TSDoc comment/);
    assert.match(stderr, /Producer\.send has no TSDoc comment/);
    assert.match(stderr, /Producer\.state has no TSDoc comment/);
    assert.match(stderr, /Producer\.create has no TSDoc comment/);
    assert.doesNotMatch(stderr, /Producer\.(acks|lingerMs|#secret|constructor|helper|inner|x) /);
    assert.equal(stderr.match(/has no TSDoc comment/g)?.length, 4);
    assert.match(stderr, /4 of 9 exported symbols and class members/);
  });

  it('fails on an export whose declaration it cannot find, rather than passing it unchecked', () => {
    const missing = check({
      ...documented,
      'src/client/index.ts': `${documented['src/client/index.ts']}export { Ghost } from './producer.js';\n`,
    });
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /cannot find the declaration of Ghost/);
  });
});
