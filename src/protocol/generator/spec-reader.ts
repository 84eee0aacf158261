// Reads Kafka's JSON message specifications from disk, for `npm run schema` only: everything else reads the
// committed schema derived from them (compact-schema.ts). The files are JSON with `//` line comments, which are
// removed (outside string literals only, since "about" texts contain URLs) before JSON.parse.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A specification as parsed, before any interpretation. */
export interface RawSpec {
  readonly file: string;
  readonly json: RawMessage;
}

export interface RawMessage {
  readonly name: string;
  readonly type: 'request' | 'response' | 'header' | 'data' | 'metadata';
  readonly apiKey?: number;
  readonly validVersions: string;
  readonly flexibleVersions: string;
  readonly listeners?: string[];
  readonly latestVersionUnstable?: boolean;
  readonly deprecatedVersions?: string;
  readonly fields: RawField[];
  readonly commonStructs?: RawStruct[];
}

export interface RawStruct {
  readonly name: string;
  readonly versions: string;
  readonly fields: RawField[];
}

export interface RawField {
  readonly name: string;
  readonly type: string;
  readonly versions?: string;
  readonly nullableVersions?: string;
  readonly taggedVersions?: string;
  readonly flexibleVersions?: string;
  readonly tag?: number;
  readonly default?: string | number | boolean | null;
  readonly fields?: RawField[];
}

/** Removes `//` comments that are not inside a string literal. */
export function stripComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else {
      out += c;
    }
  }
  return out;
}

export function parseSpecText(file: string, text: string): RawSpec {
  try {
    return { file, json: JSON.parse(stripComments(text)) as RawMessage };
  } catch (e) {
    throw new Error(`cannot parse ${file}: ${(e as Error).message}`);
  }
}

/** Every *.json file of one folder, sorted by name so that output order is stable. */
export function readSpecFolder(folder: string): RawSpec[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => parseSpecText(name, readFileSync(join(folder, name), 'utf8')));
}

/** The repository root, found from this file's place in src/ or dist/src/. */
export function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      readFileSync(join(dir, 'package.json'));
      return dir;
    } catch {
      dir = dirname(dir);
    }
  }
  throw new Error('repository root not found');
}

/**
 * Where Kafka's specifications are (a folder holding `messages/` and `internal/`): BROOK_KAFKA_SPEC_DIR when set,
 * else `../shared/kafka-protocol` beside the repository when it exists, else null (a clone on its own).
 */
export function specDirectory(): string | null {
  const override = process.env.BROOK_KAFKA_SPEC_DIR;
  if (override) return resolve(override);
  const beside = resolve(repositoryRoot(), '../shared/kafka-protocol');
  return existsSync(join(beside, 'messages')) ? beside : null;
}
