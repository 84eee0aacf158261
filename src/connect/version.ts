// The version Brook Connect reports (GET /, connector plugins): Brook's package version.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

function packageVersion(): string {
  for (const up of ['../../..', '../..']) {
    try {
      const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, up, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'brook' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // try the next level: dist/src/connect or src/connect
    }
  }
  return 'unknown';
}

export const BROOK_CONNECT_VERSION = packageVersion();
