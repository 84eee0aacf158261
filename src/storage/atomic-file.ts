// Crash-safe replacement of small files (checkpoints, partition.metadata, meta.properties).
//
// The content goes to `<name>.tmp`, is fsync'ed, renamed over the target, and the directory is fsync'ed so the
// rename itself survives a power cut. A reader therefore sees the old file or the new one, never a torn one.
// `writeFileAtomic` is synchronous (startup, shutdown, rare files); `AtomicFile` does the same off the event
// loop for files rewritten while the broker serves (checkpoints), so no fsync stalls the loop.
// `writeFileUnsynced` + `fsyncFileAndDir` split the same steps for callers that order the fsync themselves.

import {
  close,
  closeSync,
  fsync,
  fsyncSync,
  open,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlink,
  write,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { TMP_SUFFIX } from './file-names.js';

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function writeFileAtomic(path: string, content: string | Buffer): void {
  replaceFile(path, content, true);
  fsyncDir(dirname(path));
}

/**
 * Replaces the file as writeFileAtomic does (tmp, rename), but fsyncs nothing: a reader of this boot sees the
 * whole new content at once, and `fsyncFileAndDir` makes it durable later, off the event loop. Only for files
 * whose loss or tearing in a crash the reader detects and survives (producer snapshots carry a CRC and are
 * trusted only below the recovery point, which moves after that fsync).
 */
export function writeFileUnsynced(path: string, content: string | Buffer): void {
  replaceFile(path, content, false);
}

function replaceFile(path: string, content: string | Buffer, sync: boolean): void {
  const tmp = path + TMP_SUFFIX;
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const fd = openSync(tmp, 'w');
  try {
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written, written);
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/**
 * fsyncs a file and then its directory in the thread pool (the completion of a `writeFileUnsynced`). A file
 * that is gone meanwhile (deleted by truncation or retention) needs nothing and resolves.
 */
export function fsyncFileAndDir(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    open(path, 'r', (err, fd) => {
      if (err !== null) {
        if (err.code === 'ENOENT') resolve();
        else reject(err);
        return;
      }
      fsyncThenClose(fd, (syncErr) => {
        if (syncErr !== null) return reject(syncErr);
        fsyncDirAsync(dirname(path), (dirErr) => (dirErr === null ? resolve() : reject(dirErr)));
      });
    });
  });
}

/** fsyncFileAndDir, synchronously (shutdown). */
export function fsyncFileAndDirNow(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDir(dirname(path));
}

/**
 * Opens `path` now and fsyncs it in the thread pool on that descriptor, which is this call's and is closed when
 * the fsync ends. A descriptor of its own means the owner may close, rename or delete the file meanwhile: the
 * fsync still reaches the same inode and no other file can take the descriptor's number.
 */
export function fsyncInBackground(path: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise((resolve, reject) =>
    fsyncThenClose(fd, (err) => (err === null ? resolve() : reject(err))),
  );
}

/** fsyncs `fd` and then closes it, in the thread pool; `done` gets the first error of the two. */
function fsyncThenClose(fd: number, done: (err: Error | null) => void): void {
  fsync(fd, (syncErr) => close(fd, (closeErr) => done(syncErr ?? closeErr ?? null)));
}

/**
 * Asynchronous writes each use a temporary file of their own (`<name>.<n>.tmp`), never the synchronous one's,
 * so a superseded write still running never shares an inode with a newer one. Leftovers end in `.tmp` and are
 * removed when the log loads, as Kafka's are.
 */
let asyncTmpSeq = 0;

/**
 * Background replacements that may hold descriptors at once (the tmp file, then the directory's for its fsync),
 * over every AtomicFile of the process. Each file coalesces its own writes, but a burst over many files (a
 * CreateTopics of 10,000 partitions writes 10,000 leader-epoch checkpoints in one turn) would otherwise open a
 * tmp file for each and hold them all through fsyncs queued four at a time in the thread pool: beside a
 * segment descriptor per partition that doubled the broker's descriptors and ran into EMFILE. The rest wait
 * their turn in order; this only ever delays a checkpoint, which is written later anyway.
 */
export const BACKGROUND_WRITES_MAX = 32;
let backgroundWrites = 0;
const waitingForSlot: (() => void)[] = [];

function withWriteSlot(task: (release: () => void) => void): void {
  const start = (): void => {
    backgroundWrites++;
    let released = false;
    task(() => {
      if (released) return;
      released = true;
      backgroundWrites--;
      waitingForSlot.shift()?.();
    });
  };
  if (backgroundWrites < BACKGROUND_WRITES_MAX) start();
  else waitingForSlot.push(start);
}

/** Background replacements holding a slot now and waiting for one (tests). */
export function backgroundWriteSlots(): { running: number; waiting: number } {
  return { running: backgroundWrites, waiting: waitingForSlot.length };
}

/**
 * Tests only: a gate every background replacement passes before it writes its tmp file, so a test can hold the
 * write of one file and see what a request answers meanwhile. Null (the default) lets every write through at once.
 */
let backgroundWriteGate: ((path: string) => Promise<void>) | null = null;

export function setBackgroundWriteGateForTests(gate: ((path: string) => Promise<void>) | null): void {
  backgroundWriteGate = gate;
}

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

/**
 * One small file replaced crash-safely off the event loop (tmp, fsync, rename, fsync dir, as writeFileAtomic).
 * Writes are serialized and coalesced: while one runs, only the newest content waits, so the file ends with the
 * last content asked for. The rename itself runs on the event loop, after a check that no synchronous write
 * (`writeSync`, at shutdown) came since: a superseded write is dropped, never renamed over newer content.
 * Owned by whoever owns the file; errors go to `onError`.
 */
export class AtomicFile {
  private running = false;
  private next: Buffer | null = null;
  /** Bumped by every write started; a write renames only if it is still the latest. */
  private version = 0;
  private nextWaiters: Waiter[] = [];
  private runningWaiters: Waiter[] = [];
  private closed = false;

  constructor(
    readonly path: string,
    private readonly onError: (err: Error) => void,
  ) {}

  /** True while a write runs or waits. */
  get pending(): boolean {
    return this.running;
  }

  /**
   * Replaces the file with `content` in the background. The write starts on the next turn of the event loop,
   * so changes made in the same turn share it, and a close in the same turn leaves the directory untouched.
   * With `startNow` (a file written once, nothing to coalesce) it takes its place among the background writes
   * at once: a burst of such writes is queued before the writes that other files ask for later in the turn.
   */
  write(content: string | Buffer, startNow = false): void {
    if (this.closed) return;
    this.next = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    if (!this.running) {
      this.running = true;
      if (startNow) this.startNext();
      else setImmediate(() => this.startNext());
    }
  }

  /** Replaces the file now, synchronously; any background write still running is superseded. */
  writeSync(content: string | Buffer): void {
    this.version++;
    this.next = null;
    writeFileAtomic(this.path, content);
    for (const w of this.nextWaiters) w.resolve();
    this.nextWaiters = [];
  }

  /** Resolves once every content asked for so far is durable (or superseded by a synchronous write). */
  whenWritten(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve, reject) =>
      (this.next !== null ? this.nextWaiters : this.runningWaiters).push({ resolve, reject }),
    );
  }

  /**
   * Stops writing (the file's directory is going away, or the process is taken as dead); a write already running
   * is dropped before its rename and its tmp file removed. Resolves once that write has ended: from then on
   * nothing of this object touches the directory.
   */
  close(): Promise<void> {
    this.closed = true;
    this.version++;
    this.next = null;
    return this.whenWritten();
  }

  private startNext(): void {
    const bytes = this.next;
    if (bytes === null || this.closed) {
      // Nothing left to write (a synchronous write or close took it): everyone waiting is done.
      this.running = false;
      for (const w of [...this.runningWaiters, ...this.nextWaiters]) w.resolve();
      this.runningWaiters = [];
      this.nextWaiters = [];
      return;
    }
    this.next = null;
    this.running = true;
    this.runningWaiters = this.nextWaiters;
    this.nextWaiters = [];
    const version = ++this.version;
    const gate = backgroundWriteGate;
    if (gate === null) this.writeInSlot(bytes, version);
    else gate(this.path).then(() => this.writeInSlot(bytes, version));
  }

  private writeInSlot(bytes: Buffer, version: number): void {
    withWriteSlot((release) => {
      const finish = (err: Error | null): void => {
        release();
        const waiters = this.runningWaiters;
        this.runningWaiters = [];
        if (err !== null && version === this.version) {
          for (const w of waiters) w.reject(err);
          this.onError(err);
        } else {
          for (const w of waiters) w.resolve();
        }
        this.startNext();
      };
      // Superseded (a synchronous write, or close) while waiting for a slot: nothing to write.
      if (version !== this.version) return finish(null);
      const tmp = `${this.path}.${++asyncTmpSeq}${TMP_SUFFIX}`;
      writeTmp(tmp, bytes, (err) => {
        if (err !== null) return finish(err);
        if (version !== this.version) {
          // A newer write (a synchronous one, or close) came meanwhile: this content must not land.
          unlink(tmp, () => finish(null));
          return;
        }
        try {
          renameSync(tmp, this.path);
        } catch (renameErr) {
          return finish(renameErr as Error);
        }
        fsyncDirAsync(dirname(this.path), finish);
      });
    });
  }
}

function writeTmp(path: string, bytes: Buffer, done: (err: Error | null) => void): void {
  open(path, 'w', (err, fd) => {
    if (err !== null) return done(err);
    const closeWith = (first: Error | null): void => close(fd, (closeErr) => done(first ?? closeErr ?? null));
    const writeFrom = (at: number): void => {
      if (at === bytes.length) {
        fsync(fd, (syncErr) => closeWith(syncErr));
        return;
      }
      write(fd, bytes, at, bytes.length - at, at, (writeErr, n) => {
        if (writeErr !== null) closeWith(writeErr);
        else writeFrom(at + n);
      });
    };
    writeFrom(0);
  });
}

/** fsyncs a directory in the thread pool (new entries in it become durable names). */
export function fsyncDirInBackground(dir: string): Promise<void> {
  return new Promise((resolve, reject) =>
    fsyncDirAsync(dir, (err) => (err === null ? resolve() : reject(err))),
  );
}

function fsyncDirAsync(dir: string, done: (err: Error | null) => void): void {
  open(dir, 'r', (err, fd) => (err !== null ? done(err) : fsyncThenClose(fd, done)));
}

/** Reads a whole small file, or null if it does not exist; refuses files larger than `bytesMax`. */
export function readSmallFile(path: string, bytesMax: number): Buffer | null {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (size > bytesMax)
    throw new StorageFormatError(path, `${size} bytes is more than the ${bytesMax} allowed`);
  return readFileSync(path);
}

/** A storage file whose content does not follow its format. Callers decide whether to rebuild or fail. */
export class StorageFormatError extends Error {
  override name = 'StorageFormatError';
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}
