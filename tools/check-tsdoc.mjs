// `npm run lint` runs this: every symbol the published client exports (package.json "exports" "./client", that is
// src/client/index.ts) has a TSDoc comment on its declaration, so that the generated API reference (`npm run docs`)
// never shows a bare name. It reads the TypeScript sources, not the build, so lint needs no build first.
//
// What it follows: `export { a, type B, C as D } from './x.js'`, `export type { ... } from`, `export * from`
// (every top-level export of that file) and declarations in the entry itself. A declaration is
// `export [declare] [abstract] [async] class|interface|type|function|const|let|enum NAME`; its comment is the
// `/** ... */` block right before it (blank lines and nothing else between). For an overloaded function the first
// signature carries it.
//
// Members: every public member (method, property, accessor; static or not) of an exported class needs a comment
// too, the first overload or the first of a get/set pair carrying it. Private and protected members, `#names` and
// constructors (the class comment says how to make one) are left out. Members are found by their indentation,
// two spaces inside a top-level class, which the formatter (biome, also in `npm run lint`) guarantees; the
// TypeScript in use has no JavaScript API to parse with. Interface members are not checked.
//
// Usage: node tools/check-tsdoc.mjs [--root <dir>] [entry.ts ...]; exits 1 and lists each symbol without a comment.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const DEFAULT_ENTRIES = ['src/client/index.ts'];

/** The .ts source a relative `.js` import names. */
function sourceOf(fromFile, specifier) {
  const path = resolve(dirname(fromFile), specifier);
  const ts = path.replace(/\.js$/, '.ts');
  if (existsSync(ts)) return ts;
  if (existsSync(join(path, 'index.ts'))) return join(path, 'index.ts');
  throw new Error(`${fromFile}: cannot find the source of '${specifier}'`);
}

/** Source text without comments' contents mattering for export statements: only used to find statements. */
function exportStatements(text) {
  const out = [];
  const re = /^export\s+(type\s+)?(\*|\{[^}]*\})\s+from\s+'([^']+)';/gm;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[2] === '*') out.push({ star: true, from: m[3] });
    else {
      const names = m[2]
        .slice(1, -1)
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0)
        .map((s) => {
          const parts = s.replace(/^type\s+/, '').split(/\s+as\s+/);
          return { local: parts[0], exported: parts[1] ?? parts[0] };
        });
      out.push({ star: false, from: m[3], names });
    }
  }
  return out;
}

const DECLARATION =
  /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:class|interface|type|function\*?|const|let|var|enum)\s+([A-Za-z_$][\w$]*)/gm;

/** Every top-level declaration exported by a file: name -> offset of its `export` keyword (the first one). */
function declarations(text) {
  const out = new Map();
  for (let m = DECLARATION.exec(text); m !== null; m = DECLARATION.exec(text)) {
    if (!out.has(m[1])) out.set(m[1], m.index);
  }
  DECLARATION.lastIndex = 0;
  return out;
}

/** Whether the text right before `offset` (blank space aside) is a `/** ... *\/` comment. */
function hasDocComment(text, offset) {
  const before = text.slice(0, offset).trimEnd();
  if (!before.endsWith('*/')) return false;
  const start = before.lastIndexOf('/*');
  return start >= 0 && before.startsWith('/**', start) && !before.startsWith('/**/', start);
}

function lineOf(text, offset) {
  return text.slice(0, offset).split('\n').length;
}

/**
 * Where `name` is declared when `file` exports it: follows re-exports. Returns { file, text, offset } or null.
 * `seen` guards against export cycles.
 */
function findDeclaration(file, name, seen = new Set()) {
  const key = `${file}#${name}`;
  if (seen.has(key)) return null;
  seen.add(key);
  const text = readFileSync(file, 'utf8');
  const own = declarations(text).get(name);
  if (own !== undefined) return { file, text, offset: own };
  for (const s of exportStatements(text)) {
    if (s.star) {
      const found = findDeclaration(sourceOf(file, s.from), name, seen);
      if (found !== null) return found;
    } else {
      const hit = s.names.find((n) => n.exported === name);
      if (hit !== undefined) return findDeclaration(sourceOf(file, s.from), hit.local, seen);
    }
  }
  return null;
}

/** The public names an entry exports (following `export *`), each with the file that exports it. */
function publicNames(entry, seen = new Set()) {
  if (seen.has(entry)) return [];
  seen.add(entry);
  const text = readFileSync(entry, 'utf8');
  const names = [...declarations(text).keys()].map((name) => ({ name, file: entry }));
  for (const s of exportStatements(text)) {
    if (s.star) names.push(...publicNames(sourceOf(entry, s.from), seen));
    else for (const n of s.names) names.push({ name: n.exported, file: entry });
  }
  return names;
}

const CLASS_DECLARATION = /^export\s+(?:declare\s+)?(?:abstract\s+)?class\s/;
const MEMBER =
  /^(?:(public|private|protected|static|readonly|abstract|override|declare|async|accessor)\s+)*(?:(?:get|set)\s+(?=[#\w$[]))?\*?(#?[A-Za-z_$][\w$]*|\[[^\]]*\]|'[^']*')\s*[?!]?\s*[(<:=;]/;

/**
 * The public members of the class declared at `offset` of `text`, each with its offset: from the line after the
 * one that opens the class body to the first line that closes it (`}` in the first column).
 */
function publicMembers(text, offset) {
  const members = [];
  const seen = new Set();
  let at = text.indexOf('{\n', offset);
  if (at < 0) return members;
  at += 2;
  while (at < text.length) {
    const end = text.indexOf('\n', at);
    const line = text.slice(at, end < 0 ? text.length : end);
    if (line.startsWith('}')) break;
    const m = /^ {2}(?! )/.test(line) ? MEMBER.exec(line.slice(2)) : null;
    if (m !== null) {
      const name = m[2];
      const modifiers = m[0].slice(0, m[0].indexOf(name));
      const hidden = /\b(?:private|protected)\s/.test(modifiers) || name.startsWith('#');
      if (!hidden && name !== 'constructor' && !seen.has(name)) members.push({ name, offset: at });
      seen.add(name);
    }
    if (end < 0) break;
    at = end + 1;
  }
  return members;
}

export function checkTsdoc(root, entries = DEFAULT_ENTRIES) {
  const problems = [];
  const classesSeen = new Set();
  let checked = 0;
  for (const entry of entries) {
    for (const { name, file } of publicNames(resolve(root, entry))) {
      const found = findDeclaration(file, name);
      const where = relative(root, file);
      if (found === null) {
        problems.push(`${where}: cannot find the declaration of ${name}`);
        continue;
      }
      checked++;
      if (!hasDocComment(found.text, found.offset))
        problems.push(
          `${relative(root, found.file)}:${lineOf(found.text, found.offset)}: ${name} has no TSDoc comment`,
        );
      if (!CLASS_DECLARATION.test(found.text.slice(found.offset, found.text.indexOf('\n', found.offset))))
        continue;
      const classKey = `${found.file}#${found.offset}`;
      if (classesSeen.has(classKey)) continue;
      classesSeen.add(classKey);
      for (const member of publicMembers(found.text, found.offset)) {
        checked++;
        if (!hasDocComment(found.text, member.offset))
          problems.push(
            `${relative(root, found.file)}:${lineOf(found.text, member.offset)}: ${name}.${member.name} has no TSDoc comment`,
          );
      }
    }
  }
  return { checked, problems };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const rootAt = args.indexOf('--root');
  const root =
    rootAt >= 0 ? resolve(args[rootAt + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const entries = args.filter((a, i) => a !== '--root' && (rootAt < 0 || i !== rootAt + 1));
  const { checked, problems } = checkTsdoc(root, entries.length > 0 ? entries : DEFAULT_ENTRIES);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(
      `${problems.length} of ${checked} exported symbols and class members of the client lack a TSDoc comment`,
    );
    process.exit(1);
  }
}
