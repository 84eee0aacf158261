// Kafka's BrokerTopicMetrics as plain counters: one object per topic and one for all topics, bumped on the
// produce and fetch paths and read by the /metrics scrape (broker-metrics.ts). The hot path only looks its topic's
// object up in a map (no allocation once the topic has one) and adds numbers; labels, strings and prom-client
// objects are made at scrape time only.
//
// Lifecycle: created by the metrics endpoint when `brook.metrics.listener` is set (the broker's services then
// carry it; null otherwise, so that a broker without metrics pays one null check). A topic's object is created at
// its first produce or fetch here and dropped by `retainTopics` once the topic is gone from the metadata.

import { ErrorCode } from '../protocol/errors.js';

/** The counters Kafka keeps per topic and across topics (BrokerTopicMetrics). */
export class TopicCounters {
  /** MessagesInPerSec: records appended by produce requests. */
  messagesIn = 0;
  /** BytesInPerSec: bytes of produce requests' record sets appended. */
  bytesIn = 0;
  /** BytesOutPerSec: record bytes sent to consumers (follower fetches count as replication bytes instead). */
  bytesOut = 0;
  /** BytesRejectedPerSec: record-set bytes refused for their size. */
  bytesRejected = 0;
  /** FailedProduceRequestsPerSec: partition appends answered with an error. */
  failedProduceRequests = 0;
  /** FailedFetchRequestsPerSec: partition reads answered with an error. */
  failedFetchRequests = 0;
  /** TotalProduceRequestsPerSec: partition appends tried. */
  totalProduceRequests = 0;
  /** TotalFetchRequestsPerSec: partition reads tried, consumers and followers. */
  totalFetchRequests = 0;
}

/** What produced() reads of a leader append's result (Partition's LeaderAppendResult has these fields). */
export interface AppendOutcome {
  readonly errorCode: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
}

export class BrokerTopicStats {
  /** The counters across all topics (Kafka's allTopicsStats: the series without a topic label). */
  readonly all = new TopicCounters();
  /** ReplicationBytesOutPerSec: record bytes sent to followers (all topics only, as in Kafka). */
  replicationBytesOut = 0;
  private readonly byTopic = new Map<string, TopicCounters>();

  /** The counters of `topic`, made at its first use. */
  topic(name: string): TopicCounters {
    let counters = this.byTopic.get(name);
    if (counters === undefined) {
      counters = new TopicCounters();
      this.byTopic.set(name, counters);
    }
    return counters;
  }

  topics(): IterableIterator<[string, TopicCounters]> {
    return this.byTopic.entries();
  }

  /**
   * One partition's append of a produce request: `recordsBytes` were offered, `result` is the leader's answer
   * (offsets baseOffset..lastOffset when it took them). Called only for partitions this broker leads. An idempotent
   * producer's retry answered with the original offsets counts again, as its bytes arrived again.
   */
  produced(topic: string, recordsBytes: number, result: AppendOutcome): void {
    const t = this.topic(topic);
    const all = this.all;
    const errorCode = result.errorCode;
    t.totalProduceRequests++;
    all.totalProduceRequests++;
    if (errorCode === ErrorCode.NONE) {
      const appended = result.lastOffset - result.baseOffset + 1;
      t.messagesIn += appended;
      all.messagesIn += appended;
      t.bytesIn += recordsBytes;
      all.bytesIn += recordsBytes;
      return;
    }
    t.failedProduceRequests++;
    all.failedProduceRequests++;
    if (errorCode === ErrorCode.MESSAGE_TOO_LARGE || errorCode === ErrorCode.RECORD_LIST_TOO_LARGE) {
      t.bytesRejected += recordsBytes;
      all.bytesRejected += recordsBytes;
    }
  }

  /**
   * One partition's read of a fetch request, answered with `bytes` of records or an error. A topic that does not
   * exist is not counted at all (as in Kafka): its name comes from the client, and counting it would let any
   * client grow the map with names of its choosing.
   */
  fetched(topic: string, bytes: number, errorCode: number, fromFollower: boolean): void {
    if (
      topic === '' ||
      errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION ||
      errorCode === ErrorCode.UNKNOWN_TOPIC_ID
    )
      return;
    const t = this.topic(topic);
    const all = this.all;
    t.totalFetchRequests++;
    all.totalFetchRequests++;
    if (errorCode !== ErrorCode.NONE) {
      t.failedFetchRequests++;
      all.failedFetchRequests++;
    } else if (fromFollower) {
      this.replicationBytesOut += bytes;
    } else {
      t.bytesOut += bytes;
      all.bytesOut += bytes;
    }
  }

  /** Forgets topics that no longer exist, as Kafka removes a deleted topic's metrics. */
  retainTopics(exists: (topic: string) => boolean): void {
    for (const name of [...this.byTopic.keys()]) if (!exists(name)) this.byTopic.delete(name);
  }
}
