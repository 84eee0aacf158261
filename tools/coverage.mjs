// Line coverage of src/ from node's own V8 coverage (NODE_V8_COVERAGE), with no coverage package: every node
// process a test run starts, broker and tool processes included (they inherit the variable), writes its block
// counts as JSON when it exits; this module folds those files into covered lines of the TypeScript sources
// through the compiled files' source maps, and deletes each file once folded (a full run starts hundreds of
// processes, whose raw files would take gigabytes). run-tests.mjs --coverage folds while the tests run.
//
// A TypeScript line counts when code was compiled from it (it has a source map entry) and it is not a comment or
// only closing brackets; it is covered when the compiled position of its first entry lies in a block that ran in
// any process. Files under src/ that no process loaded count with every line uncovered.
//
// The floor (tools/coverage-floor.json) only goes up: `node tools/coverage.mjs --raise-floor coverage/lines.json`
// raises it to the measured value (rounded down to 0.1) and never lowers it.

import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST_SRC = join(REPO_ROOT, 'dist', 'src');
export const FLOOR_FILE = join(REPO_ROOT, 'tools', 'coverage-floor.json');

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUE = new Map([...BASE64].map((c, i) => [c, i]));

/** Decodes one source map segment's base64 VLQ numbers. */
function decodeVlq(text) {
  const out = [];
  let value = 0;
  let shift = 0;
  for (const c of text) {
    const digit = BASE64_VALUE.get(c);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
    } else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

const NOT_CODE = /^(\/\/|\/\*|\*|[)}\];,\s]*$)/;

/**
 * One compiled file: its TypeScript source (repo-relative), the TS lines that count, and for each the compiled
 * offset of its first source map entry.
 */
function compiledFile(jsPath) {
  const map = JSON.parse(readFileSync(`${jsPath}.map`, 'utf8'));
  const tsPath = resolve(dirname(jsPath), map.sourceRoot ?? '', map.sources[0]);
  // A compiled file whose source is gone (left in dist/ by an earlier build) is not part of src/.
  if (!existsSync(tsPath)) return null;
  const tsLines = readFileSync(tsPath, 'utf8').split('\n');
  const js = readFileSync(jsPath, 'utf8');
  const jsStarts = lineStarts(js);
  /** TS line (0-based) -> compiled offset of its first entry. */
  const offsets = new Map();
  let sourceLine = 0;

  let sourceIndex = 0;
  map.mappings.split(';').forEach((line, generatedLine) => {
    let generatedColumn = 0;
    for (const segment of line.split(',')) {
      if (segment === '') continue;
      const [dCol, dSource, dLine] = decodeVlq(segment);
      generatedColumn += dCol;
      if (dSource === undefined) continue;
      sourceIndex += dSource;
      sourceLine += dLine;

      if (sourceIndex !== 0 || offsets.has(sourceLine)) continue;
      if (NOT_CODE.test((tsLines[sourceLine] ?? '').trim())) continue;
      offsets.set(sourceLine, (jsStarts[generatedLine] ?? 0) + generatedColumn);
    }
  });
  return { source: relative(REPO_ROOT, tsPath), offsets, jsLength: js.length };
}

/** compiledFile() once per URL; null for a stale compiled file. */
function compiledOnce(cache, url, jsPath) {
  if (!cache.has(url)) cache.set(url, compiledFile(jsPath));
  return cache.get(url);
}

/** Every compiled file of src/, by file URL. */
function compiledFiles() {
  const files = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      // Only compiled TypeScript has a map; the console's bundled page (console/static) is not measured.
      else if (name.endsWith('.js') && existsSync(`${path}.map`)) files.set(pathToFileURL(path).href, path);
    }
  };
  walk(DIST_SRC);
  return files;
}

/** Folds raw V8 coverage files into covered lines; create one per run. */
export class CoverageFolder {
  constructor() {
    this.paths = compiledFiles();
    /** URL -> compiledFile(), made when a process first reports the file. */
    this.compiled = new Map();
    /** URL -> Set of covered TS lines. */
    this.covered = new Map();
    this.processes = 0;
  }

  /** Folds the finished files of `dir` and deletes them; `all` also takes files written in the last seconds. */
  foldDir(dir, all = false) {
    let names;
    try {
      names = readdirSync(dir).filter((n) => n.startsWith('coverage-') && n.endsWith('.json'));
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      // A file is written in one go at exit; a young one may still be being written.
      if (!all && Date.now() - statSync(path).mtimeMs < 3000) continue;
      let raw;
      try {
        raw = JSON.parse(readFileSync(path, 'utf8'));
      } catch {
        if (all) rmSync(path, { force: true });
        continue;
      }
      this.fold(raw);
      rmSync(path, { force: true });
    }
  }

  fold(raw) {
    this.processes++;
    for (const script of raw.result ?? []) {
      const jsPath = this.paths.get(script.url);
      if (jsPath === undefined) continue;
      const file = compiledOnce(this.compiled, script.url, jsPath);
      if (file === null) continue;
      // The innermost block around an offset decides: apply the largest blocks first.
      const ranges = script.functions.flatMap((f) => f.ranges);
      ranges.sort((a, b) => b.endOffset - b.startOffset - (a.endOffset - a.startOffset));
      const ran = new Uint8Array(file.jsLength + 1);
      for (const r of ranges) ran.fill(r.count > 0 ? 1 : 0, r.startOffset, Math.min(r.endOffset, ran.length));
      let covered = this.covered.get(script.url);
      if (covered === undefined) {
        covered = new Set();
        this.covered.set(script.url, covered);
      }
      for (const [line, offset] of file.offsets) if (ran[offset] === 1) covered.add(line);
    }
  }

  /** Totals over every file of src/, and per source file. */
  summary() {
    const files = {};
    let lines = 0;
    let covered = 0;
    for (const [url, jsPath] of this.paths) {
      const file = compiledOnce(this.compiled, url, jsPath);
      if (file === null) continue;
      const hit = this.covered.get(url)?.size ?? 0;
      lines += file.offsets.size;
      covered += hit;
      files[file.source] = { lines: file.offsets.size, covered: hit };
    }
    const percent = lines === 0 ? 0 : Math.floor((covered / lines) * 1000) / 10;
    return { percent, lines, covered, processes: this.processes, files };
  }
}

/** Covered share per top-level module of src/ (broker, storage, ...), lowest first. */
export function byModule(summary) {
  const modules = new Map();
  for (const [source, f] of Object.entries(summary.files)) {
    const name = source.split('/').slice(0, 2).join('/');
    const m = modules.get(name) ?? { lines: 0, covered: 0 };
    m.lines += f.lines;
    m.covered += f.covered;
    modules.set(name, m);
  }
  return [...modules]
    .map(([name, m]) => ({ name, percent: m.lines === 0 ? 0 : (m.covered / m.lines) * 100, ...m }))
    .sort((a, b) => a.percent - b.percent);
}

export function readFloor() {
  return JSON.parse(readFileSync(FLOOR_FILE, 'utf8')).lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--raise-floor') {
  const measured = JSON.parse(readFileSync(process.argv[3] ?? 'coverage/lines.json', 'utf8')).percent;
  const floor = readFloor();
  if (measured > floor) {
    writeFileSync(FLOOR_FILE, `${JSON.stringify({ lines: measured }, null, 2)}\n`);
    console.log(`coverage floor raised from ${floor}% to ${measured}% of src/ lines`);
  } else {
    console.log(`coverage floor stays at ${floor}% (measured ${measured}%)`);
  }
}
