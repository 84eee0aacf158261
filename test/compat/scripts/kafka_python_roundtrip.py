"""kafka-python against a Brook broker: admin, produce with every codec, consume by offset, offsets by time.

Prints one JSON object with what it observed; the Node test asserts on it. Exits non-zero on any client error.
Usage: kafka_python_roundtrip.py BOOTSTRAP TOPIC_PREFIX
"""
import json
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

bootstrap, prefix = sys.argv[1], sys.argv[2]
out = {}

admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="compat-admin", request_timeout_ms=10000)
topics = {codec: f"{prefix}-{codec}" for codec in ["none", "gzip", "snappy", "lz4", "zstd"]}
admin.create_topics([NewTopic(name=t, num_partitions=2, replication_factor=1) for t in topics.values()])
out["listed"] = sorted(t for t in admin.list_topics() if t.startswith(prefix))

sent = {}
before_ms = int(time.time() * 1000)
for codec, topic in topics.items():
    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        compression_type=None if codec == "none" else codec,
        acks="all",
        linger_ms=5,
    )
    records = []
    for i in range(50):
        key = f"key-{i % 7}".encode()
        value = f"{codec}-value-{i}".encode() * (1 + i % 3)
        headers = [("h", f"{i}".encode())]
        md = producer.send(topic, key=key, value=value, headers=headers).get(timeout=10)
        records.append({"partition": md.partition, "offset": md.offset, "key": key.decode(), "value": value.decode(), "h": str(i)})
    producer.flush()
    producer.close()
    sent[codec] = records

received = {}
# kafka-python 2.0.2 fetches with version 4; Kafka (and Brook) refuse zstd batches to fetches below version 10,
# so the zstd topic is checked by its end offsets instead of by consuming it.
for codec, topic in topics.items():
    if codec == "zstd":
        consumer = KafkaConsumer(bootstrap_servers=bootstrap)
        ends = consumer.end_offsets([TopicPartition(topic, p) for p in range(2)])
        out["zstd_end_offsets"] = sum(ends.values())
        consumer.close()
        continue
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=5000)
    parts = [TopicPartition(topic, p) for p in range(2)]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    got = []
    deadline = time.time() + 15
    while len(got) < 50 and time.time() < deadline:
        for tp, msgs in consumer.poll(timeout_ms=500).items():
            for m in msgs:
                got.append({"partition": m.partition, "offset": m.offset, "key": m.key.decode(), "value": m.value.decode(), "h": dict(m.headers)["h"].decode()})
    received[codec] = got
    if codec == "none":
        end = consumer.end_offsets(parts)
        out["end_offsets"] = {str(tp.partition): off for tp, off in end.items()}
        by_time = consumer.offsets_for_times({tp: before_ms for tp in parts})
        out["offsets_for_times"] = {str(tp.partition): (o.offset if o else None) for tp, o in by_time.items()}
    consumer.close()

key_fn = lambda r: (r["partition"], r["offset"])
out["roundtrip"] = {codec: sorted(sent[codec], key=key_fn) == sorted(received[codec], key=key_fn) for codec in received}
out["counts"] = {codec: len(received[codec]) for codec in received}

admin.delete_topics([topics["none"]])
time.sleep(0.5)
out["after_delete"] = sorted(t for t in admin.list_topics() if t.startswith(prefix))
admin.close()
print(json.dumps(out))
