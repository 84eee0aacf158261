// The history of a chaos run, in Jepsen's shape: every operation a client or the nemesis starts is an `invoke`,
// and its completion is `ok` (it happened), `fail` (it certainly did not) or `info` (unknown: it may have
// happened, e.g. a produce that timed out). Each op carries the process that ran it, a function name `f`, a
// value, and the time in milliseconds since the run started. The history is written as JSON lines while the run
// goes (so a run that dies still leaves it) and kept in memory for the checkers.

import { createWriteStream, type WriteStream } from 'node:fs';

export type OpType = 'invoke' | 'ok' | 'fail' | 'info';

export interface Op {
  index: number;
  /** Milliseconds since the run started. */
  time: number;
  type: OpType;
  process: string;
  f: string;
  value?: unknown;
  error?: string;
}

export class History {
  readonly ops: Op[] = [];
  private readonly startMs = performance.now();
  private readonly out: WriteStream;

  constructor(path: string) {
    this.out = createWriteStream(path);
  }

  now(): number {
    return Math.round((performance.now() - this.startMs) * 10) / 10;
  }

  add(type: OpType, process: string, f: string, value?: unknown, error?: string): Op {
    const op: Op = { index: this.ops.length, time: this.now(), type, process, f };
    if (value !== undefined) op.value = value;
    if (error !== undefined) op.error = error;
    this.ops.push(op);
    this.out.write(`${JSON.stringify(op)}\n`);
    return op;
  }

  /** Runs fn as one op: invoke, then ok with its answer, or info/fail with the error as `classify` says. */
  async record<T>(
    process: string,
    f: string,
    value: unknown,
    fn: () => Promise<T>,
    answer: (result: T) => unknown = (r) => r,
    classify: (e: unknown) => 'fail' | 'info' = () => 'info',
  ): Promise<T | undefined> {
    this.add('invoke', process, f, value);
    try {
      const result = await fn();
      this.add('ok', process, f, answer(result));
      return result;
    } catch (e) {
      this.add(classify(e), process, f, value, errorText(e));
      return undefined;
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((done) => this.out.end(done));
  }
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`.slice(0, 300);
  return String(e).slice(0, 300);
}
