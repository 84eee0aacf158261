// The fixture most mirror tests share: two single-broker clusters, A and B, started before the file's tests, a
// temporary directory for mm2.properties, and the MirrorMaker processes a test starts; all stopped and removed
// after the file, whatever its tests did.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { type BrokerProcess, startBroker } from '../../helpers/broker-process.js';
import type { MirrorProcess } from './mirror-process.js';

export interface MirrorClusters {
  /** Cluster A (the source of most flows); set once the file's `before` has run. */
  readonly a: BrokerProcess;
  /** Cluster B. */
  readonly b: BrokerProcess;
  /** A fresh directory for the file's mm2.properties and other files. */
  readonly dir: string;
  /** MirrorMaker processes to stop after the file: a test pushes each one it starts. */
  readonly mirrors: MirrorProcess[];
}

/** Registers the file's before/after hooks and returns the clusters they start (read them inside tests). */
export function useMirrorClusters(dirPrefix: string): MirrorClusters {
  let a: BrokerProcess | undefined;
  let b: BrokerProcess | undefined;
  let dir: string | undefined;
  const mirrors: MirrorProcess[] = [];
  before(async () => {
    [a, b] = await Promise.all([startBroker(), startBroker()]);
    dir = mkdtempSync(join(tmpdir(), dirPrefix));
  });
  after(async () => {
    for (const m of mirrors) await m.stop();
    await Promise.all([a?.stop(), b?.stop()]);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not started: read it inside a test`);
    return value;
  };
  return {
    get a() {
      return started(a, 'cluster A');
    },
    get b() {
      return started(b, 'cluster B');
    },
    get dir() {
      return started(dir, 'the test directory');
    },
    mirrors,
  };
}
