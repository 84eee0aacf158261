// DescribeLogDirs (35): the log directory with the size of each partition's log and, from v4, the
// directory's total and usable bytes.

import { statfsSync } from 'node:fs';
import { ErrorCode } from '../../protocol/errors.js';
import type {
  DescribeLogDirsRequest,
  DescribeLogDirsResponse,
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
    const byTopic = new Map<string, DescribeLogDirsResponseDescribeLogDirsTopic>();
    for (const p of replicas.all()) {
      if (wanted !== null && !wanted.has(p.key)) continue;
      let topic = byTopic.get(p.topic);
      if (topic === undefined) {
        topic = { name: p.topic, partitions: [] };
        byTopic.set(p.topic, topic);
      }
      topic.partitions.push({
        partitionIndex: p.partition,
        partitionSize: BigInt(p.log.sizeInBytes),
        offsetLag: 0n,
        isFutureKey: false,
      });
    }
    let totalBytes = -1n;
    let usableBytes = -1n;
    try {
      const fs = statfsSync(logs.dir);
      totalBytes = BigInt(fs.blocks) * BigInt(fs.bsize);
      usableBytes = BigInt(fs.bavail) * BigInt(fs.bsize);
    } catch {
      // Sizes stay -1 (unknown), as Kafka reports when it cannot read them.
    }
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      results: [
        {
          errorCode: ErrorCode.NONE,
          logDir: logs.dir,
          topics: [...byTopic.values()],
          totalBytes,
          usableBytes,
        },
      ],
    };
  },
});
