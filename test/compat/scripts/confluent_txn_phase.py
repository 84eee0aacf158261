"""One transactional producer session through librdkafka: init_transactions, then `count` records to the
topic's partitions 0 and 1 in one committed transaction, labelled `label`. With --read, afterwards reads the
topic read_committed to its end. argv: bootstrap transactional_id topic label count [--read].
Prints one JSON line.
"""

import json
import sys

from confluent_txn_common import read_to_end, transactional_producer

bootstrap, tid, topic, label, count = sys.argv[1:6]
read = "--read" in sys.argv[6:]

producer = transactional_producer(bootstrap, tid, 60)
producer.begin_transaction()
for i in range(int(count)):
    producer.produce(topic, partition=i % 2, value=f"{label}-{i}".encode())
producer.commit_transaction(60)

values = read_to_end(bootstrap, topic, [0, 1], "read_committed", "read", 30) if read else None
print(json.dumps({"values": values}))
