// Kafka's ZooKeeper layout: paths and the JSON of each znode, so that Brook's tree reads like a Kafka cluster's.
export * from './admin.js';
export * from './bootstrap.js';
export * from './broker-registration.js';
export * from './config.js';
export * from './controller.js';
export * from './fencing.js';
export * from './json.js';
export * from './paths.js';
export * from './producer-id-block.js';
export * from './topic.js';
