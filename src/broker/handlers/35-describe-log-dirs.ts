// DescribeLogDirs (35): each log directory (JBOD, `log.dirs`) with the size of each partition's log and, from v4,
// the directory's total and usable bytes. An offline directory (a failed write took it out of service) is
// answered KAFKA_STORAGE_ERROR without partitions, as Kafka's ReplicaManager.describeLogDirs does. A replica being
// moved between directories (AlterReplicaLogDirs) shows twice: its current log, and its future log with
// isFutureKey and, as offsetLag, how far the future log is behind the current one.

import { statfsSync } from 'node:fs';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeLogDirsRequest,
  DescribeLogDirsResponse,
  DescribeLogDirsResponseDescribeLogDirsResult,
  DescribeLogDirsResponseDescribeLogDirsTopic,
} from '../../protocol/messages/35-describe-log-dirs.js';
import { ApiKey } from '../../protocol/registry.js';
import type { Log } from '../../storage/log.js';
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
    const add = (log: Log, isFutureKey: boolean, offsetLag: number): void => {
      const dir = logs.dirOfLog(log);
      const topics = dir === undefined ? undefined : byDir.get(dir);
      if (topics === undefined) return;
      const { topic: name, partition } = log.topicPartition;
      let topic = topics.get(name);
      if (topic === undefined) {
        topic = { name, partitions: [] };
        topics.set(name, topic);
      }
      topic.partitions.push({
        partitionIndex: partition,
        partitionSize: BigInt(log.sizeInBytes),
        offsetLag: BigInt(offsetLag),
        isFutureKey,
      });
    };
    for (const p of replicas.all()) {
      if (wanted !== null && !wanted.has(p.key)) continue;
      add(p.log, false, 0);
    }
    for (const future of logs.allFutureLogs()) {
      const { topic, partition } = future.topicPartition;
      if (wanted !== null && !wanted.has(`${topic}-${partition}`)) continue;
      const current = replicas.get(topic, partition)?.log;
      add(future, true, Math.max(0, (current?.logEndOffset ?? future.logEndOffset) - future.logEndOffset));
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
