// Formats generated sources with the project's own biome settings, so that committed output passes
// `biome check` unchanged. The files are written to a scratch folder with a copy of the formatter and linter
// settings (biome refuses paths outside the project root when its git integration is on), checked with
// --write there, and read back.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { GeneratedFile } from './generate.js';

export function formatFiles(files: GeneratedFile[], repoRoot: string): GeneratedFile[] {
  const scratch = mkdtempSync(join(tmpdir(), 'brook-generate-'));
  try {
    const config = JSON.parse(readFileSync(join(repoRoot, 'biome.json'), 'utf8')) as Record<string, unknown>;
    delete config.vcs;
    delete config.files;
    delete config.$schema;
    writeFileSync(join(scratch, 'biome.json'), JSON.stringify(config));
    for (const file of files) {
      const path = join(scratch, file.path);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.text);
    }
    const biome = join(repoRoot, 'node_modules', '.bin', 'biome');
    const result = spawnSync(biome, ['check', '--write', '--no-errors-on-unmatched', 'src'], {
      cwd: scratch,
      encoding: 'utf8',
    });
    if (result.status !== 0) {
      throw new Error(`biome rejected the generated code:\n${result.stdout}\n${result.stderr}`);
    }
    return files.map((file) => ({ path: file.path, text: readFileSync(join(scratch, file.path), 'utf8') }));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
