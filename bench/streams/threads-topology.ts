// The topology of the stream-thread benchmark (bench/streams/threads.ts), as a module so that worker threads can
// build it (brook.topology.module). Each record costs some CPU, as a real mapping step does (parsing, hashing,
// enrichment): BENCH_WORK rounds of SHA-256 over its value (default 20), then a count per key into LMDB with its
// changelog, so the benchmark measures whether a second thread adds a core's worth of processing.

import { createHash } from 'node:crypto';
import {
  Consumed,
  Materialized,
  Produced,
  Serdes,
  StreamsBuilder,
  type Topology,
} from '../../src/streams/index.js';

const S = Serdes.String();

export function buildTopology(): Topology {
  const rounds = Number(process.env.BENCH_WORK ?? 20);
  const builder = new StreamsBuilder();
  builder
    .stream('bench-mt-in', Consumed.with(S, S))
    .mapValues((v) => {
      let digest = v;
      for (let i = 0; i < rounds; i++) digest = createHash('sha256').update(digest).digest('hex');
      return digest;
    })
    .groupByKey()
    .count(Materialized.as('bench-mt-counts'))
    .toStream()
    .to('bench-mt-out', Produced.with(S, Serdes.Long()));
  return builder.build();
}
