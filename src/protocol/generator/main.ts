// `npm run generate`: regenerates the committed protocol codecs from Kafka's specifications and removes
// generated files that the specifications no longer produce.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GENERATED_MARKER } from './emit-files.js';
import { formatFiles } from './format.js';
import { GENERATED_FOLDERS, generateFiles } from './generate.js';
import { repositoryRoot, specDirectory } from './spec-reader.js';

function main(): void {
  const root = repositoryRoot();
  const files = formatFiles(generateFiles(specDirectory()), root);
  const produced = new Set(files.map((f) => f.path));
  let changed = 0;
  for (const file of files) {
    const path = join(root, file.path);
    if (existsSync(path) && readFileSync(path, 'utf8') === file.text) continue;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.text);
    changed++;
  }
  for (const folder of GENERATED_FOLDERS) {
    if (!existsSync(join(root, folder))) continue;
    for (const name of readdirSync(join(root, folder))) {
      const path = `${folder}/${name}`;
      if (!name.endsWith('.ts') || produced.has(path)) continue;
      if (readFileSync(join(root, path), 'utf8').startsWith(GENERATED_MARKER)) {
        rmSync(join(root, path));
        changed++;
      }
    }
  }
  console.log(`generated ${files.length} files, ${changed} changed`);
}

main();
