"""Transactions through librdkafka (confluent-kafka-python) against a Brook broker.

argv: bootstrap prefix. Prints one JSON line with what the consumers saw and the committed offsets.
"""

import json
import sys

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_txn_common import read_to_end, transactional_producer

bootstrap, prefix = sys.argv[1], sys.argv[2]
topic = f"{prefix}-txn"
source = f"{prefix}-source"
group = f"{prefix}-group"

admin = AdminClient({"bootstrap.servers": bootstrap})
for f in admin.create_topics([NewTopic(topic, 2, 1), NewTopic(source, 1, 1)], operation_timeout=10).values():
    f.result()

# Offsets to commit through the transaction: a consumer of the group that sends them.
seed = Producer({"bootstrap.servers": bootstrap})
for i in range(5):
    seed.produce(source, key=b"s", value=f"src-{i}".encode())
seed.flush(30)

consumer = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
)
consumer.subscribe([source])
got = []
while len(got) < 5:
    m = consumer.poll(10)
    if m is None:
        raise SystemExit("no source records")
    if m.error():
        continue
    got.append(m)

producer = transactional_producer(bootstrap, f"{prefix}-tid", 30)
producer.begin_transaction()
for i in range(10):
    producer.produce(topic, partition=i % 2, key=b"k", value=f"committed-{i}".encode())
producer.send_offsets_to_transaction(
    [TopicPartition(source, 0, got[-1].offset() + 1)], consumer.consumer_group_metadata(), 30
)
producer.commit_transaction(30)

producer.begin_transaction()
for i in range(6):
    producer.produce(topic, partition=i % 2, key=b"k", value=f"aborted-{i}".encode())
producer.flush(30)
producer.abort_transaction(30)

# A third, committed transaction after the aborted one: the LSO moves past the abort.
producer.begin_transaction()
producer.produce(topic, partition=0, key=b"k", value=b"committed-last")
producer.commit_transaction(30)

committed = consumer.committed([TopicPartition(source, 0)], 30)
consumer.close()


def read_all(isolation):
    return read_to_end(bootstrap, topic, [0, 1], isolation, f"{prefix}-{isolation}", 20)


# Fencing: a second producer with the same transactional.id fences the first.
second = transactional_producer(bootstrap, f"{prefix}-tid", 30)
fenced = None
try:
    producer.begin_transaction()
    producer.produce(topic, partition=0, value=b"zombie")
    producer.commit_transaction(30)
except KafkaException as e:
    err = e.args[0]
    fenced = err.name()
second.begin_transaction()
second.produce(topic, partition=1, key=b"k", value=b"committed-second")
second.commit_transaction(30)

print(
    json.dumps(
        {
            "committed": read_all("read_committed"),
            "uncommitted": read_all("read_uncommitted"),
            "group_offset": committed[0].offset,
            "fenced": fenced,
        }
    )
)
