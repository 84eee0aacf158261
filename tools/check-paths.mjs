// `npm run lint` runs this after biome: every repository path that documentation or a comment names must exist,
// so that a README never sends a reader to a file that was renamed or never written.
//
// What counts as a named path:
// - in *.md files, anywhere (code blocks too): a token starting with a top-level folder of the repository
//   (`src/...`, `test/...`, `bench/...`, `tools/...`, `bin/...`, `config/...`, `.ci/...`), resolved from the root;
// - in *.md files, in inline code outside code blocks: a token with a slash whose first segment is a folder
//   beside the file or at the root (`replica/partition.ts`), resolved beside the file, then from the root; and a
//   bare file name ending in .ts/.mjs/.md (`broker.ts`), found beside the file, at the root, anywhere below the
//   file's folder, or below its mirror (a README in src/<module> speaks of tests in test/<module>, and the other way round);
// - in *.md files, the target of every relative link (`[text](../x.md#a-heading)`), resolved beside the file,
//   with its #anchor, when given, naming a heading of the target as GitHub writes heading anchors;
// - in comments of *.ts/*.mjs/*.js files: `src/...`, `test/...`, `bench/...`, `tools/...` tokens, from the root.
// A `.js` name is satisfied by its `.ts` source. Tokens with placeholders (`NN-name.ts`, `<id>`, `*`) are skipped.
//
// And the top README.md names every folder of src/ as `src/<module>` (its tour covers every module).
//
// Usage: node tools/check-paths.mjs [--root <dir>]; exits 1 and lists each missing path with where it is named.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOTED_MD = ['src', 'test', 'bench', 'tools', 'bin', 'config', '.ci'];
const ROOTED_CODE = ['src', 'test', 'bench', 'tools'];
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'data', 'cluster', '.git']);
const FILE_NAME = /^[\w.-]+\.(ts|mjs|md)$/;
const PLACEHOLDER = /NN|<|>|\*|\{|\}|\.\.\.|…|\$/;

function rootedPattern(folders) {
  const alternatives = folders.map((f) => f.replace('.', '\\.')).join('|');
  // Not preceded by a path character, so a path under dist/ or a relative import is not read as a root path.
  return new RegExp(`(?<![\\w./@-])(?:${alternatives})/[\\w./@+-]*`, 'g');
}
const ROOTED_MD_RE = rootedPattern(ROOTED_MD);
const ROOTED_CODE_RE = rootedPattern(ROOTED_CODE);

/** Removes trailing sentence punctuation a path cannot end with. */
function trimToken(token) {
  return token.replace(/[.,:;)]+$/, '');
}

function exists(path) {
  if (existsSync(path)) return true;
  return path.endsWith('.js') && existsSync(`${path.slice(0, -3)}.ts`);
}

function walk(dir, root, out) {
  for (const name of readdirSync(dir)) {
    if (SKIPPED_FOLDERS.has(name) || (name.startsWith('.') && name !== '.ci')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (relative(root, path).split(sep).join('/') === 'test/fixtures') continue;
      walk(path, root, out);
    } else out.push(path);
  }
  return out;
}

/** Splits a markdown text into lines, each marked as inside a fenced code block or not. */
function markdownLines(text) {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return { line, fenced: true };
    }
    return { line, fenced };
  });
}

function checkMarkdown(file, root, report) {
  const dir = dirname(file);
  markdownLines(readFileSync(file, 'utf8')).forEach(({ line, fenced }, i) => {
    const where = `${relative(root, file)}:${i + 1}`;
    for (const match of line.matchAll(ROOTED_MD_RE)) {
      const token = trimToken(match[0]);
      if (!PLACEHOLDER.test(token) && !exists(join(root, token))) report(where, token);
    }
    if (fenced) return;
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const problem = brokenLink(match[1], file);
      if (problem !== null) report(where, problem);
    }
    for (const match of line.matchAll(/`([^`\s]+)`/g)) {
      const token = trimToken(match[1]);
      if (PLACEHOLDER.test(token) || token.startsWith('/') || token.includes('://')) continue;
      if (ROOTED_MD.some((f) => token.startsWith(`${f}/`))) continue; // checked above
      const first = token.split('/')[0];
      const slashed =
        token.includes('/') &&
        first !== '' &&
        first !== '.' &&
        first !== '..' &&
        (isFolder(join(dir, first)) || isFolder(join(root, first)));
      if (slashed) {
        if (!exists(join(dir, token)) && !exists(join(root, token))) report(where, token);
      } else if (FILE_NAME.test(token)) {
        if (!exists(join(dir, token)) && !exists(join(root, token)) && !foundBelow(token, dir, root)) {
          report(where, token);
        }
      }
    }
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file's headings. */
function anchorsOf(file) {
  const anchors = new Set();
  for (const { line, fenced } of markdownLines(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading && !fenced) anchors.add(anchorOf(heading[1]));
  }
  return anchors;
}

/** Null for a good link (or one that leaves the repository), else what is wrong with it. */
function brokenLink(target, file) {
  if (/^[a-z][a-z+.-]*:/i.test(target)) return null; // https:, mailto:
  const hash = target.indexOf('#');
  const path = hash >= 0 ? target.slice(0, hash) : target;
  const anchor = hash >= 0 ? target.slice(hash + 1) : '';
  const resolved = path === '' ? file : join(dirname(file), path);
  if (!existsSync(resolved)) return path;
  if (anchor !== '' && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) return target;
  return null;
}

/** A folder's files by name, collected once per folder. */
const namesBelow = new Map();

function foundBelow(name, dir, root) {
  const rel = relative(root, dir).split(sep).join('/');
  const folders = [dir];
  if (rel.startsWith('src/')) folders.push(join(root, 'test', rel.slice(4)));
  else if (rel.startsWith('test/')) folders.push(join(root, 'src', rel.slice(5)));
  else if (rel === 'bench' || rel.startsWith('bench/')) folders.push(join(root, 'test', rel));
  return folders.some((folder) => {
    if (rel === '' && folder === dir) return false; // the whole repository is not "below" the top README
    if (!isFolder(folder)) return false;
    if (!namesBelow.has(folder)) {
      namesBelow.set(folder, new Set(walk(folder, root, []).map((f) => f.slice(f.lastIndexOf(sep) + 1))));
    }
    return (
      namesBelow.get(folder).has(name) ||
      (name.endsWith('.js') && namesBelow.get(folder).has(`${name.slice(0, -3)}.ts`))
    );
  });
}

function isFolder(path) {
  return existsSync(path) && statSync(path).isDirectory();
}

function checkCode(file, root, report) {
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const trimmed = line.trimStart();
      let comment = null;
      if (trimmed.startsWith('//') || trimmed.startsWith('*') || trimmed.startsWith('/*')) comment = trimmed;
      else if (line.includes(' // ')) comment = line.slice(line.indexOf(' // '));
      if (comment === null) return;
      for (const match of comment.matchAll(ROOTED_CODE_RE)) {
        const token = trimToken(match[0]);
        if (!PLACEHOLDER.test(token) && !exists(join(root, token))) {
          report(`${relative(root, file)}:${i + 1}`, token);
        }
      }
    });
}

export function missingPaths(root) {
  const missing = [];
  const report = (where, token) => missing.push({ where, token });
  for (const file of walk(root, root, [])) {
    if (file.endsWith('.md')) checkMarkdown(file, root, report);
    else if (/\.(ts|mjs|js)$/.test(file)) checkCode(file, root, report);
  }
  missing.push(...modulesMissingFromTour(root));
  return missing;
}

/**
 * The top README's tour must name every module: each folder of src/ as `src/<module>`, so that a module added
 * later cannot be left out of it (the tour once lacked controller, coordinator, client and cli, later streams).
 */
export function modulesMissingFromTour(root) {
  const readme = join(root, 'README.md');
  const src = join(root, 'src');
  if (!existsSync(readme) || !isFolder(src)) return [];
  const text = readFileSync(readme, 'utf8');
  return readdirSync(src)
    .filter((name) => isFolder(join(src, name)))
    .filter((name) => !new RegExp(`(?<![\\w./-])src/${name}(?![\\w-])`).test(text))
    .map((name) => ({ where: 'README.md', token: `src/${name}`, tour: true }));
}

const rootArg = process.argv.indexOf('--root');
const root = rootArg >= 0 ? process.argv[rootArg + 1] : join(dirname(fileURLToPath(import.meta.url)), '..');
const missing = missingPaths(root);
for (const { where, token, tour } of missing) {
  if (tour) console.error(`${where}: the tour does not name the module ${token}`);
  else console.error(`${where}: names ${token}, which does not exist`);
}
if (missing.length > 0) {
  console.error(`${missing.length} named path(s) missing or module(s) not in the README's tour`);
  process.exit(1);
}
