// The V8 flags a broker process runs with, as Kafka's start script passes its JVM's GC settings
// (KAFKA_JVM_PERFORMANCE_OPTS). Every launcher of `brook server` passes them: bin/brook's own first line (which
// cannot import this, and test/cli/server-node-flags.test.ts keeps equal), `brook cluster`, the benchmarks and the
// test harnesses, so what is measured and tested is what runs.
//
// --no-memory-reducer: V8's memory reducer starts a full mark-compact some seconds after the heap last grew
// whenever JavaScript allocates slowly, to hand an idle page's memory back. A broker moves its bytes in pooled
// buffers outside the JavaScript heap, so under steady load it allocates slowly and the reducer kept collecting:
// followers paused for mark-compacts in pairs every twelve seconds or so, in every acks=all round trip they were
// part of (bench/README.md, "Where the end-to-end p99 goes on an idle machine"). A server keeps the heap its load
// made instead, as a JVM keeps its own.
export const SERVER_NODE_FLAGS: readonly string[] = ['--no-memory-reducer'];
