// One broker process for a file of command-line tool tests, and a scratch directory, both made before the file's
// tests and removed after them, whatever happened; `brook` runs bin/brook with the arguments given.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before } from 'node:test';
import { type BrokerProcess, run, startBroker } from './broker-process.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');

export interface ToolBroker {
  readonly broker: BrokerProcess;
  readonly scratch: string;
  /** Runs `bin/brook args`, with `input` on its stdin; at most 60 s. */
  brook(args: string[], input?: string): ReturnType<typeof run>;
  /** `--bootstrap-server` and the broker's address. */
  bootstrapArgs(): string[];
}

/** A broker with one partition per new topic (num.partitions 1) and a scratch directory named from the prefix. */
export function useToolBroker(scratchPrefix: string): ToolBroker {
  let broker: BrokerProcess | undefined;
  let scratch: string | undefined;
  before(async () => {
    broker = await startBroker({ overrides: { 'num.partitions': 1 } });
    scratch = mkdtempSync(join(tmpdir(), scratchPrefix));
  });
  after(async () => {
    await broker?.stop();
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });
  const started = (): BrokerProcess => {
    assert.ok(broker, 'the tool broker is started by the before hook');
    return broker;
  };
  return {
    get broker() {
      return started();
    },
    get scratch() {
      assert.ok(scratch !== undefined, 'the scratch directory is made by the before hook');
      return scratch;
    },
    brook: (args, input) => run(process.execPath, [BROOK, ...args], { input, timeoutMs: 60_000 }),
    bootstrapArgs: () => ['--bootstrap-server', started().bootstrap],
  };
}
