// Brook's own broker keys, for behaviour Kafka has no key for. Kept few; each says why Kafka's keys are not
// enough. All are under the `brook.` prefix so they can never collide with a future Kafka key.

import { ConfigType as T } from './config-types.js';
import { defineKey as key } from './define-key.js';
import { between } from './validators.js';

export const BROOK_KEYS = [
  // Kafka acknowledges after the page cache and relies on replication for durability. A single node has no
  // replicas, so this key lets it promise that an acknowledged write survives a power cut: the produce waits
  // for fsync, and appends that arrive while one fsync runs share the next one (group commit).
  key(
    'brook.log.flush.group.commit.enable',
    T.BOOLEAN,
    'false',
    'medium',
    'Acknowledge produces only after their data is fsynced; concurrent appends share one fsync.',
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
    'Longest wait before a group-commit fsync starts, to gather more appends; 0 starts at once.',
    {
      validator: between(0, 1000),
      updateMode: 'cluster-wide',
      support: 'honoured',
    },
  ),
];
