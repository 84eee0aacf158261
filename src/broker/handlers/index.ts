// The handler table: every API this broker answers, with the versions it implements. ApiVersions advertises
// exactly this table.

import type { ApiHandler } from '../api-handler.js';
import { produceHandler } from './00-produce.js';
import { fetchHandler } from './01-fetch.js';
import { listOffsetsHandler } from './02-list-offsets.js';
import { metadataHandler } from './03-metadata.js';
import { apiVersionsHandler } from './18-api-versions.js';
import { createTopicsHandler } from './19-create-topics.js';
import { deleteTopicsHandler } from './20-delete-topics.js';
import { deleteRecordsHandler } from './21-delete-records.js';
import { initProducerIdHandler } from './22-init-producer-id.js';
import { describeConfigsHandler } from './32-describe-configs.js';
import { alterConfigsHandler } from './33-alter-configs.js';
import { describeLogDirsHandler } from './35-describe-log-dirs.js';
import { createPartitionsHandler } from './37-create-partitions.js';
import { incrementalAlterConfigsHandler } from './44-incremental-alter-configs.js';
import { describeClusterHandler } from './60-describe-cluster.js';

export const HANDLERS: readonly ApiHandler[] = [
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  metadataHandler,
  apiVersionsHandler,
  createTopicsHandler,
  deleteTopicsHandler,
  deleteRecordsHandler,
  initProducerIdHandler,
  describeConfigsHandler,
  alterConfigsHandler,
  describeLogDirsHandler,
  createPartitionsHandler,
  incrementalAlterConfigsHandler,
  describeClusterHandler,
];
