// Loaded into the broker under test with `node --import` (by broker-process.ts, `broker --gc-prof DIR`), never
// by the broker itself: a sampling heap profile of the allocations that survive young-generation collections.
// V8's sampling heap profiler normally drops a sample when its object dies; asked to keep those collected by a
// major GC but not those collected by a scavenge, what remains is what was promoted to the old space (whether it
// died there later or is still alive at exit): the objects whose churn makes old-space collections, by the stack
// that allocated them. Written to DIR/broker-PID.heapprofile when the broker exits (in-thread inspector calls
// answer synchronously, so the exit handler can). Sampling starts at the first SIGUSR2. Without BROOK_BENCH_GC_PROFILE it does nothing.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/** Bytes between samples: small enough for a few thousand samples a second under load, cheap enough to run. */
const samplingIntervalBytes = 8192;

const dir = process.env.BROOK_BENCH_GC_PROFILE;
if (dir !== undefined && dir !== '') {
  const session = new Session();
  session.connect();
  // From the first SIGUSR2 (loop-probe.ts's signal at the start of a measured window), so that what the
  // broker's start-up loaded and keeps (modules, configs) does not fill the profile.
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (sampling) return;
    sampling = true;
    session.post('HeapProfiler.enable');
    session.post('HeapProfiler.startSampling', {
      samplingInterval: samplingIntervalBytes,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: false,
    });
  });
  process.once('exit', () => {
    if (!sampling) return;
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (err === null)
        writeFileSync(join(dir, `broker-${process.pid}.heapprofile`), JSON.stringify(result.profile));
    });
  });
}
