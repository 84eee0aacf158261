"""One transactional producer session through librdkafka: init_transactions, then `count` records to the
topic's partitions 0 and 1 in one committed transaction, labelled `label`. With --read, afterwards reads the
topic read_committed to its end. argv: bootstrap transactional_id topic label count [--read].
Prints one JSON line.
"""

import json
import sys
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition

bootstrap, tid, topic, label, count = sys.argv[1:6]
read = "--read" in sys.argv[6:]

producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "transaction.timeout.ms": 60000})
producer.init_transactions(60)
producer.begin_transaction()
for i in range(int(count)):
    producer.produce(topic, partition=i % 2, value=f"{label}-{i}".encode())
producer.commit_transaction(60)

values = None
if read:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-{uuid.uuid4()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    c.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
    values = []
    eof = set()
    idle = 0
    while len(eof) < 2 and idle < 30:
        m = c.poll(1)
        if m is None:
            idle += 1
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                eof.add(m.partition())
            continue
        values.append(m.value().decode())
    c.close()
    values.sort()

print(json.dumps({"values": values}))
