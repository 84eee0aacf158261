// Loaded into every test file's process by run-tests.mjs (--import): once all of the file's tests and hooks
// have ended, a process that is still alive GRACE_MS later is ended with exit code 1, so that its file is
// reported as failed, with what kept it alive, instead of holding the run for ever. (A retry timer that outlived
// the client's close() once kept test/client/retries.test.ts alive after it passed.) The timer is unref'd: it
// never keeps a process alive itself. This hook is registered before the file's own root hooks and node:test runs
// them in that order, so the grace also covers the file's teardown (stopping its brokers).

import { after } from 'node:test';

const GRACE_MS = 30_000;

after(() => {
  const timer = setTimeout(() => {
    const resources = process.getActiveResourcesInfo().join(', ');
    process.stderr.write(
      `${process.argv[1]}: every test ended, but the process was still alive ${GRACE_MS} ms later ` +
        `(active: ${resources}); ending it as a failure\n`,
    );
    process.exit(1);
  }, GRACE_MS);
  timer.unref();
});
