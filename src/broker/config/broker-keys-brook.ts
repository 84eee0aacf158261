// Brook's own broker keys, for behaviour Kafka has no key for. Kept few; each says why Kafka's keys are not
// enough. All are under the `brook.` prefix so they can never collide with a future Kafka key.

import { parseMetricsListener } from '../../metrics/metrics-listener.js';
import { ConfigError } from './config-error.js';
import { ConfigType as T } from './config-types.js';
import { defineKey as key } from './define-key.js';
import { atLeast, between, oneOf, type Validator } from './validators.js';

export const BROOK_KEYS = [
  // Kafka chooses the authorization log's level in log4j (kafka.authorizer.logger), which Brook does not have.
  key(
    'brook.authorizer.log.level',
    T.STRING,
    'INFO',
    'low',
    'Brook: level of the authorization log (kafka.authorizer.logger): OFF, INFO (denied operations) ' +
      'or DEBUG (allowed ones too).',
    { validator: oneOf(['OFF', 'INFO', 'DEBUG'], { ignoreCase: true }), support: 'honoured' },
  ),
  // Kafka acknowledges after the page cache and relies on replication for durability. A single node has no
  // replicas, so this key lets it promise that an acknowledged write survives a power cut: the produce waits
  // for fsync, and appends that arrive while one fsync runs share the next one (group commit).
  key(
    'brook.log.flush.group.commit.enable',
    T.BOOLEAN,
    'false',
    'medium',
    'Brook: acknowledge produced records only once they are on disk (fsync); appends in flight share ' +
      'one fsync.',
    {
      updateMode: 'cluster-wide',
      support: 'honoured',
    },
  ),
  // Waiting a little before the fsync gathers more appends into it: fewer fsyncs, higher latency.
  key(
    'brook.log.flush.group.commit.max.delay.ms',
    T.INT,
    '0',
    'low',
    'Brook: longest time, in milliseconds, a group-commit fsync waits to gather more appends; 0 ' +
      'starts it at once.',
    {
      validator: between(0, 1000),
      updateMode: 'cluster-wide',
      support: 'honoured',
    },
  ),
  // Node has no sendfile: a fetch read from the file costs a thread-pool read into a fresh buffer. Appends just
  // written are still in memory, so fetches at the tail of a log are answered from them; this bounds the memory
  // those kept appends may hold, across all partitions. Kafka leaves this to the page cache.
  key(
    'brook.log.tail.cache.bytes',
    T.LONG,
    String(32 * 1024 * 1024),
    'low',
    'Brook: memory, in bytes over all partitions, kept for recently written batches so that fetches ' +
      'at the tail of a log need no file read; 0 turns the cache off.',
    {
      validator: atLeast(0),
      support: 'honoured',
    },
  ),
  // Kafka writes appends on request handler threads, apart from the network threads that serve fetches. Here the
  // event loop is both: an append written inline saves a thread-pool round trip, but every page-cache copy, and
  // every pause while the kernel throttles dirty pages, holds up all connections, fetches included. Measured on
  // two cores, inline appends left a consumer of a single busy partition seconds behind the producer (tail fetch
  // a quarter of the produce rate) for about the same bytes moved; off (the default), it stays at the tail with
  // millisecond latency (bench/README.md). See src/storage/log.ts.
  key(
    'brook.log.append.inline.enable',
    T.BOOLEAN,
    'false',
    'low',
    'Brook: write an append on the event loop when its log has no write running, instead of handing ' +
      'every append to the I/O threads (false).',
    {
      support: 'honoured',
    },
  ),
  // Every fresh buffer counts as external memory for V8, which starts a full garbage collection about every
  // 64 MB of it; gathering each large produce frame into a new buffer made those collections the broker's
  // largest cost. Frames are reused once nothing refers to them; this bounds the memory kept idle for that.
  // Kafka's JVM has no such cost (its request memory pool only bounds queued bytes, see queued.max.request.bytes).
  key(
    'brook.network.frame.pool.bytes',
    T.LONG,
    String(16 * 1024 * 1024),
    'low',
    'Brook: memory, in bytes, kept idle for reuse by request frames of 16 KiB to 8 MiB, besides what the ' +
      'tail cache does not use of brook.log.tail.cache.bytes; 0 gives each frame a new buffer.',
    {
      validator: atLeast(0),
      support: 'honoured',
    },
  ),
  // Kafka's network threads send fetched bytes with sendfile, blocking on the page cache. Here a file read goes to
  // the thread pool, whose two wake-ups cost about as much as the copy of 1 MiB; a consumer catching up one
  // partition pays them once per fetch. One read of each fetch runs on the event loop instead, up to this size;
  // a read that was slow (the disk, not the page cache) turns that off for a second. See
  // src/storage/inline-reads.ts.
  key(
    'brook.log.read.inline.max.bytes',
    T.INT,
    String(1024 * 1024),
    'low',
    'Brook: the largest file read, in bytes, done on the event loop rather than the I/O threads (one per ' +
      'fetch); 0 sends every read to the I/O threads.',
    {
      validator: atLeast(0),
      support: 'honoured',
    },
  ),
  // Kafka leaves encryption at rest to the disk. These keys make Brook encrypt its own segments with keys from a
  // key provider (src/storage/encryption, src/storage/README.md), so a copied volume reveals no record data.
  key(
    'brook.encryption.enable',
    T.BOOLEAN,
    'false',
    'high',
    'Brook: encrypt new log segments at rest (the default of the topic key of the same name); needs ' +
      'brook.encryption.key.provider.',
    { support: 'honoured' },
  ),
  key(
    'brook.encryption.key.provider',
    T.STRING,
    null,
    'high',
    'Brook: where the master keys are: file (brook.encryption.key.file), env ' +
      '(brook.encryption.key.env) or http (a key service at brook.encryption.key.http.url).',
    { validator: oneOf(['file', 'env', 'http']), support: 'honoured' },
  ),
  key(
    'brook.encryption.key.file',
    T.STRING,
    null,
    'high',
    'Brook: file of master keys, 256-bit keys in hex or base64, one per line, optionally as id:key; ' +
      'the last one is current.',
    { support: 'honoured' },
  ),
  key(
    'brook.encryption.key.env',
    T.STRING,
    'BROOK_ENCRYPTION_KEY',
    'medium',
    'Brook: environment variable holding the master keys, in the key file text (lines or commas).',
    { support: 'honoured' },
  ),
  key(
    'brook.encryption.key.http.url',
    T.STRING,
    null,
    'high',
    'Brook: base URL of the key service, which takes POST <url>/wrap and <url>/unwrap.',
    { support: 'honoured' },
  ),
  key(
    'brook.encryption.key.http.key.id',
    T.STRING,
    null,
    'medium',
    'Brook: key id sent with wrap requests; unset, the service uses its current key.',
    { support: 'honoured' },
  ),
  key(
    'brook.encryption.key.http.token',
    T.PASSWORD,
    null,
    'medium',
    'Brook: bearer token sent to the key service.',
    { support: 'honoured' },
  ),
  key(
    'brook.encryption.key.http.timeout.ms',
    T.INT,
    '10000',
    'low',
    'Brook: longest wait, in milliseconds, for one key service request.',
    { validator: between(1, 600000), support: 'honoured' },
  ),
  key(
    'brook.encryption.key.rotation.check.interval.ms',
    T.LONG,
    '60000',
    'low',
    "Brook: how often, in milliseconds, the broker reads the provider's current master key again, " +
      'rotating and re-wrapping when it changed; 0 never.',
    { validator: atLeast(0), support: 'honoured' },
  ),
  // Kafka exposes its metrics over JMX, which Node does not have; operators scrape Kafka through the Prometheus
  // JMX exporter. This key turns on the HTTP endpoint that serves the same metric names directly, with /healthz
  // and /readyz beside them (src/metrics/README.md).
  key(
    'brook.metrics.listener',
    T.STRING,
    null,
    'medium',
    'Brook: http://host:port of the Prometheus endpoint (/metrics, /healthz, /readyz); unset, no ' +
      'endpoint.',
    {
      validator: metricsListener(),
      support: 'honoured',
    },
  ),
  // Kafka has no console of its own; operators run one beside it (AKHQ, Kafka UI, Redpanda Console). This key
  // serves Brook's web console (src/console) from the broker process, speaking to the broker's own listener.
  key(
    'brook.console.listener',
    T.STRING,
    null,
    'low',
    'http://host:port of the web console served by the broker, a client of its own PLAINTEXT listener; unset: none.',
    {
      validator: metricsListener(),
      support: 'honoured',
    },
  ),
  // Kafka leaves replacing a dead broker's replicas to an operator or to Cruise Control's self-healing; a
  // managed service does it by itself. The controller does it here (src/controller/self-healing.ts).
  key(
    'brook.self.healing.broker.failure.timeout.ms',
    T.LONG,
    '300000',
    'medium',
    'Brook: time, in milliseconds, a broker may be gone before the controller moves its replicas to ' +
      'live brokers; -1 never.',
    { validator: atLeast(-1), support: 'honoured' },
  ),
  // The moves of self-healing copy whole logs: bound what they take from producers' and consumers' bandwidth.
  key(
    'brook.self.healing.replication.throttled.rate',
    T.LONG,
    String(50 * 1024 * 1024),
    'medium',
    'Brook: replication throttle, in bytes per second, on the brokers taking part while self-healing ' +
      'moves replicas; -1 none.',
    { validator: atLeast(-1), support: 'honoured' },
  ),
  // Fast failure detection (src/controller/liveness-probe.ts): a broker whose listener refuses connections is
  // fenced through the store long before its ZooKeeper session expires.
  key(
    'brook.controller.liveness.probe.interval.ms',
    T.INT,
    '250',
    'medium',
    'Brook: how often, in milliseconds, the controller probes each broker with a TCP connection to ' +
      'its inter-broker listener; 0 turns probing off.',
    { validator: atLeast(0), support: 'honoured' },
  ),
  key(
    'brook.controller.liveness.probe.refusals',
    T.INT,
    '2',
    'medium',
    'Brook: refused probe connections in a row after which the controller fences the broker (deletes ' +
      'its registration).',
    { validator: atLeast(1), support: 'honoured' },
  ),
];

/** `brook.metrics.listener` and `brook.console.listener` must parse as an address (http, a host, an explicit port). */
function metricsListener(): Validator {
  return {
    check(key, value) {
      const parsed = parseMetricsListener(String(value));
      if (!parsed.ok) throw new ConfigError(key, value, parsed.reason);
    },
    describe: () => 'http://host:port',
  };
}
