// DescribeLogDirs (35): each log directory (JBOD, `log.dirs`) with the size of each partition's log and, from v4,
// the directory's total and usable bytes. An offline directory (a failed write took it out of service) is
// answered KAFKA_STORAGE_ERROR without partitions, as Kafka's ReplicaManager.describeLogDirs does.

import { statfsSync } from 'node:fs';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeLogDirsRequest,
  DescribeLogDirsResponse,
  DescribeLogDirsResponseDescribeLogDirsResult,
  DescribeLogDirsResponseDescribeLogDirsTopic,
} from '../../protocol/messages/35-describe-log-dirs.js';
import { ApiKey } from '../../protocol/registry.js';
import { defineHandler } from '../api-handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

export const describeLogDirsHandler = defineHandler<DescribeLogDirsRequest, DescribeLogDirsResponse>({
  apiKey: ApiKey.DESCRIBE_LOG_DIRS,
  minVersion: 0,
  maxVersion: 4,
  handle(context, request) {
    // Kafka's check: DESCRIBE on the cluster; refused, the answer has no log directories (and, v3+, the error).
    if (!authorizeCluster(context, AclOperation.DESCRIBE)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
    }
    const { replicas, logs } = context.services;
    const wanted =
      request.topics === null
        ? null
        : new Set(request.topics.flatMap((t) => t.partitions.map((p) => `${t.topic}-${p}`)));
    const byDir = new Map<string, Map<string, DescribeLogDirsResponseDescribeLogDirsTopic>>();
    for (const dir of logs.dirs) byDir.set(dir, new Map());
    for (const p of replicas.all()) {
      if (wanted !== null && !wanted.has(p.key)) continue;
      const dir = logs.dirOfLog(p.log);
      const topics = dir === undefined ? undefined : byDir.get(dir);
      if (topics === undefined) continue;
      let topic = topics.get(p.topic);
      if (topic === undefined) {
        topic = { name: p.topic, partitions: [] };
        topics.set(p.topic, topic);
      }
      topic.partitions.push({
        partitionIndex: p.partition,
        partitionSize: BigInt(p.log.sizeInBytes),
        offsetLag: 0n,
        isFutureKey: false,
      });
    }
    const results: DescribeLogDirsResponseDescribeLogDirsResult[] = [];
    for (const [dir, topics] of byDir) {
      if (!logs.isOnline(dir)) {
        results.push({
          errorCode: ErrorCode.KAFKA_STORAGE_ERROR,
          logDir: dir,
          topics: [],
          totalBytes: -1n,
          usableBytes: -1n,
        });
        continue;
      }
      let totalBytes = -1n;
      let usableBytes = -1n;
      try {
        const fs = statfsSync(dir);
        totalBytes = BigInt(fs.blocks) * BigInt(fs.bsize);
        usableBytes = BigInt(fs.bavail) * BigInt(fs.bsize);
      } catch {
        // Sizes stay -1 (unknown), as Kafka reports when it cannot read them.
      }
      results.push({
        errorCode: ErrorCode.NONE,
        logDir: dir,
        topics: [...topics.values()],
        totalBytes,
        usableBytes,
      });
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, results };
  },
});
