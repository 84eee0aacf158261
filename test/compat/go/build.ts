// Builds the Go compatibility programs under test/compat/go against Debian's Go packages (golang-go, Sarama and
// kafka-go in /usr/share/gocode), in GOPATH mode since no module proxy is reachable. Binaries are kept in the
// temporary directory under a hash of the sources and of `go version`, so that a second run does not build
// again; Go's build cache sits next to them, so that a changed program rebuilds in seconds.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const SOURCE_ROOT = resolve(import.meta.dirname, '../../../../test/compat/go');
const WORK_DIR = join(tmpdir(), 'brook-go-compat');
const BUILD_TIMEOUT_MS = 300_000;

/** Runs `go` with its arguments in SOURCE_ROOT; rejects with its output when it fails or runs too long. */
async function go(args: string[], timeoutMs: number): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('go', args, {
      cwd: SOURCE_ROOT,
      env: goEnv(),
      timeout: timeoutMs,
    });
    return stdout;
  } catch (err) {
    const e = err as { message: string; stdout?: string; stderr?: string };
    throw new Error(`go ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** The environment `go` runs in: GOPATH mode, Debian's sources, caches in the temporary directory. */
function goEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: WORK_DIR,
    GO111MODULE: 'off',
    GOPATH: `${join(WORK_DIR, 'gopath')}:/usr/share/gocode`,
    GOCACHE: join(WORK_DIR, 'cache'),
    GOFLAGS: '',
    // The zstd binding calls a function libzstd marks deprecated; its warning is noise on every build.
    CGO_CFLAGS: '-O2 -g -Wno-deprecated-declarations',
  };
}

export interface GoPrograms {
  /** Absolute path of each program's binary, by its directory name (`sarama-check`, ...). */
  readonly binaries: Readonly<Record<string, string>>;
  /** Whether this call compiled them (false when they were already built from the same sources). */
  readonly built: boolean;
  readonly buildMs: number;
}

/** Builds every program (a directory with a main.go) under test/compat/go, or finds them built. */
export async function buildGoPrograms(): Promise<GoPrograms> {
  const names = readdirSync(SOURCE_ROOT, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(SOURCE_ROOT, d.name, 'main.go')))
    .map((d) => d.name)
    .sort();
  const hash = createHash('sha256').update(await go(['version'], 30_000));
  for (const name of names) hash.update(name).update(readFileSync(join(SOURCE_ROOT, name, 'main.go')));
  const binDir = join(WORK_DIR, `bin-${hash.digest('hex').slice(0, 16)}`);
  const binaries = Object.fromEntries(names.map((n) => [n, join(binDir, n)]));
  if (names.every((n) => existsSync(binaries[n]!))) return { binaries, built: false, buildMs: 0 };

  const started = Date.now();
  // Build into a directory of our own and rename it into place, so that a build that fails or is interrupted
  // never leaves a half-written binary where a later run would take it as finished.
  const staging = join(WORK_DIR, `staging-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    await go(['build', '-o', staging, ...names.map((n) => `./${n}`)], BUILD_TIMEOUT_MS);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  rmSync(binDir, { recursive: true, force: true });
  renameSync(staging, binDir);
  return { binaries, built: true, buildMs: Date.now() - started };
}
