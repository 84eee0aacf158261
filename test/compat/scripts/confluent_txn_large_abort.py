"""An aborted transaction larger than one fetch, through librdkafka (confluent-kafka-python).

On a topic with small segments, one transaction of `count` records of `size` bytes is aborted, then one of ten
records is committed; a read_committed consumer then reads the partition from the beginning. The abort is indexed
in the segment of its ABORT marker, segments after the data the first fetches return.
argv: bootstrap prefix count size. Prints one JSON line: the values the consumer received, sorted.
"""

import json
import sys

from confluent_kafka.admin import AdminClient, NewTopic
from confluent_txn_common import read_to_end, transactional_producer

bootstrap, prefix, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
topic = f"{prefix}-large-abort"

admin = AdminClient({"bootstrap.servers": bootstrap})
for f in admin.create_topics([NewTopic(topic, 1, 1, config={"segment.bytes": "65536"})], operation_timeout=10).values():
    f.result()

producer = transactional_producer(bootstrap, f"{prefix}-tid", 60)
producer.begin_transaction()
for i in range(count):
    producer.produce(topic, partition=0, value=f"aborted-{i}-".encode().ljust(size, b"x"))
    producer.poll(0)
producer.flush(60)
producer.abort_transaction(60)

producer.begin_transaction()
for i in range(10):
    producer.produce(topic, partition=0, value=f"committed-{i}".encode())
producer.commit_transaction(60)

values = read_to_end(bootstrap, topic, [0], "read_committed", f"{prefix}-read", 30)
print(json.dumps({"values": [v if v.startswith("committed-") else v[: v.index("-", 8)] for v in values]}))
