// AlterReplicaLogDirs (34): move replicas of this broker to other log directories of it (JBOD), as Kafka does:
// each partition gets a future log in the destination, filled while the current log keeps taking writes, then
// swapped in (src/broker/replica/log-dir-mover.ts). Per partition: NONE (moving, or already there),
// LOG_DIR_NOT_FOUND, KAFKA_STORAGE_ERROR, REPLICA_NOT_AVAILABLE (not hosted yet: it will be created there).

import { ErrorCode } from '../../protocol/errors.js';
import type {
  AlterReplicaLogDirsRequest,
  AlterReplicaLogDirsResponse,
  AlterReplicaLogDirsResponseAlterReplicaLogDirTopicResult,
} from '../../protocol/messages/34-alter-replica-log-dirs.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import { alterReplicaLogDir } from '../replica/log-dir-mover.js';

export const alterReplicaLogDirsHandler = defineHandler<
  AlterReplicaLogDirsRequest,
  AlterReplicaLogDirsResponse
>({
  apiKey: ApiKey.ALTER_REPLICA_LOG_DIRS,
  minVersion: 0,
  maxVersion: 2,
  handle(context, request) {
    // Kafka's check: ALTER on the cluster, else every partition answers CLUSTER_AUTHORIZATION_FAILED.
    const authorized = authorizeCluster(context, AclOperation.ALTER);
    const { logs, replicas, logDirMover, logger } = context.services;
    const byTopic = new Map<string, AlterReplicaLogDirsResponseAlterReplicaLogDirTopicResult>();
    for (const dir of request.dirs) {
      for (const topic of dir.topics) {
        let result = byTopic.get(topic.name);
        if (result === undefined) {
          result = { topicName: topic.name, partitions: [] };
          byTopic.set(topic.name, result);
        }
        for (const partitionIndex of topic.partitions) {
          let errorCode: number = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
          if (authorized) {
            try {
              errorCode = alterReplicaLogDir(
                { logs, replicas, mover: logDirMover },
                topic.name,
                partitionIndex,
                dir.path,
              );
            } catch (err) {
              logger.error(
                `moving ${topic.name}-${partitionIndex} to ${dir.path} failed: ${err instanceof Error ? err.message : String(err)}`,
              );
              errorCode = ErrorCode.KAFKA_STORAGE_ERROR;
            }
          }
          result.partitions.push({ partitionIndex, errorCode });
        }
      }
    }
    return { throttleTimeMs: 0, results: [...byTopic.values()] };
  },
});
