/*
 * The peer of the broker benchmark: librdkafka's in-memory mock cluster (one broker, C, no files), started
 * through rd_kafka_mock_cluster_new and driven by mock-peer.ts over stdin and stdout. Compiled at bench time
 * against the system's librdkafka-dev (Debian: apt-get install librdkafka-dev); librdkafka itself is not part
 * of this repository.
 *
 * Protocol, one line each way:
 *   out: "bootstrap <host:port>"              once the cluster listens
 *   in:  "topic <name> <partitions>"          create a topic (replication factor 1)
 *   out: "ok" or "error <text>"
 *   EOF on stdin                              destroy the cluster and exit 0
 *
 * The mock keeps each partition's log in memory and drops its oldest batches beyond a bound of its own, so a
 * long run does not grow without limit; it answers Produce up to v7 and Fetch up to v11.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

int main(void) {
  char error[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  /* Warnings only: the handle exists for the mock's bookkeeping and never connects anywhere. */
  if (rd_kafka_conf_set(conf, "log_level", "3", error, sizeof error) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "rdkafka-mock-peer: %s\n", error);
    return 2;
  }
  rd_kafka_t *handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (handle == NULL) {
    fprintf(stderr, "rdkafka-mock-peer: %s\n", error);
    return 2;
  }
  rd_kafka_mock_cluster_t *cluster = rd_kafka_mock_cluster_new(handle, 1);
  if (cluster == NULL) {
    fprintf(stderr, "rdkafka-mock-peer: rd_kafka_mock_cluster_new failed\n");
    rd_kafka_destroy(handle);
    return 2;
  }
  printf("bootstrap %s\n", rd_kafka_mock_cluster_bootstraps(cluster));
  fflush(stdout);

  char line[1024];
  while (fgets(line, sizeof line, stdin) != NULL) {
    char name[512];
    int partitions = 0;
    if (sscanf(line, "topic %511s %d", name, &partitions) == 2 && partitions > 0) {
      rd_kafka_resp_err_t code = rd_kafka_mock_topic_create(cluster, name, partitions, 1);
      if (code == RD_KAFKA_RESP_ERR_NO_ERROR)
        printf("ok\n");
      else
        printf("error %s\n", rd_kafka_err2str(code));
    } else {
      printf("error unknown command\n");
    }
    fflush(stdout);
  }
  rd_kafka_mock_cluster_destroy(cluster);
  rd_kafka_destroy(handle);
  return 0;
}
