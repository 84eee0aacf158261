"""confluent-kafka-python (librdkafka) against a Brook broker: admin, idempotent produce with every codec,
consume by assigned offsets, offsets by time. Prints one JSON object; exits non-zero on client errors.
Usage: confluent_roundtrip.py BOOTSTRAP TOPIC_PREFIX
"""
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, prefix = sys.argv[1], sys.argv[2]
out = {}
codecs = ["none", "gzip", "snappy", "lz4", "zstd"]
topics = {c: f"{prefix}-{c}" for c in codecs}

admin = AdminClient({"bootstrap.servers": bootstrap})
for t, f in admin.create_topics([NewTopic(t, num_partitions=3, replication_factor=1) for t in topics.values()], operation_timeout=10).items():
    f.result(timeout=15)
md = admin.list_topics(timeout=10)
out["listed"] = sorted(t for t in md.topics if t.startswith(prefix))
out["partitions"] = len(md.topics[topics["none"]].partitions)

before_ms = int(time.time() * 1000)
sent = {}
for codec, topic in topics.items():
    errors = []
    delivered = []
    p = Producer({
        "bootstrap.servers": bootstrap,
        "enable.idempotence": True,
        "compression.type": codec,
        "linger.ms": 5,
    })

    def on_delivery(err, msg, delivered=delivered, errors=errors):
        if err is not None:
            errors.append(str(err))
        else:
            delivered.append({"partition": msg.partition(), "offset": msg.offset(), "key": msg.key().decode(), "value": msg.value().decode()})

    for i in range(100):
        p.produce(topic, key=f"k{i % 11}", value=f"{codec}-{i}" * (1 + i % 4), headers=[("n", str(i).encode())], on_delivery=on_delivery)
    p.flush(20)
    if errors:
        raise SystemExit(f"delivery errors for {codec}: {errors[:3]}")
    sent[codec] = delivered

received = {}
for codec, topic in topics.items():
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{prefix}-unused", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(3)])
    got = []
    deadline = time.time() + 20
    while len(got) < 100 and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            raise SystemExit(f"consume error: {m.error()}")
        got.append({"partition": m.partition(), "offset": m.offset(), "key": m.key().decode(), "value": m.value().decode()})
    received[codec] = got
    if codec == "none":
        times = c.offsets_for_times([TopicPartition(topic, p, before_ms) for p in range(3)], timeout=10)
        out["offsets_for_times"] = sorted(tp.offset for tp in times)
        lo, hi = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        out["watermarks0"] = [lo, hi]
        out["count0"] = sum(1 for r in got if r["partition"] == 0)
    c.close()

key_fn = lambda r: (r["partition"], r["offset"])
out["counts"] = {c: len(received[c]) for c in codecs}
out["roundtrip"] = {c: sorted(sent[c], key=key_fn) == sorted(received[c], key=key_fn) for c in codecs}

for t, f in admin.delete_topics([topics["none"]]).items():
    f.result(timeout=15)
time.sleep(0.5)
out["after_delete"] = sorted(t for t in admin.list_topics(timeout=10).topics if t.startswith(prefix))
print(json.dumps(out))
