// `npm run generate`: regenerates the committed protocol codecs from the committed schema and removes generated
// files that the schema no longer produces.
// `npm run schema [-- --kafka-version <text>]`: derives the committed schema from Kafka's specifications (found
// by BROOK_KAFKA_SPEC_DIR); the version text says which Kafka they come from and is kept from the committed
// schema when not given.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { derivedSchemaFile, readCommittedSchema } from './compact-schema.js';
import { GENERATED_MARKER } from './emit-files.js';
import { formatFiles } from './format.js';
import { committedSchema, GENERATED_FOLDERS, generateFiles } from './generate.js';
import { repositoryRoot, specDirectory } from './spec-reader.js';

/** Writes a file when its text differs; true when it did. */
function writeIfChanged(path: string, text: string): boolean {
  if (existsSync(path) && readFileSync(path, 'utf8') === text) return false;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return true;
}

function generate(root: string): void {
  const files = formatFiles(generateFiles(committedSchema()), root);
  const produced = new Set(files.map((f) => f.path));
  let changed = 0;
  for (const file of files) if (writeIfChanged(join(root, file.path), file.text)) changed++;
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

function schema(root: string, args: string[]): void {
  const specDir = specDirectory();
  if (!specDir) {
    throw new Error(
      "Kafka's specifications not found: set BROOK_KAFKA_SPEC_DIR to a folder with messages/ and internal/",
    );
  }
  const at = args.indexOf('--kafka-version');
  const version = at >= 0 ? args[at + 1] : readCommittedSchema(root)?.source.version;
  if (!version) throw new Error('say which Kafka the specifications come from: --kafka-version <text>');
  const file = derivedSchemaFile(specDir, version, root);
  const changed = writeIfChanged(join(root, file.path), file.text);
  console.log(`${file.path} from ${specDir}: ${changed ? 'changed' : 'unchanged'}`);
}

const [command = 'generate', ...rest] = process.argv.slice(2);
try {
  const root = repositoryRoot();
  if (command === 'generate') generate(root);
  else if (command === 'schema') schema(root, rest);
  else throw new Error(`unknown command ${command}: generate or schema`);
} catch (e) {
  console.error((e as Error).message);
  process.exitCode = 1;
}
