"""confluent-kafka-python (librdkafka) AdminClient and Consumer offset calls against a Brook broker.

Prints one JSON object with what each call answered (librdkafka's error names, None when it worked); the Node
test asserts on it. Usage: confluent_admin.py BOOTSTRAP PREFIX
"""
import json
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

bootstrap, prefix = sys.argv[1], sys.argv[2]
out = {}
admin = AdminClient({"bootstrap.servers": bootstrap})


def outcomes(futures):
    """Each resource's error name (None when it worked)."""
    result = {}
    for key, future in futures.items():
        try:
            future.result()
            result[str(getattr(key, "name", key))] = None
        except Exception as e:
            result[str(getattr(key, "name", key))] = e.args[0].name()
    return result


c1, c2 = f"{prefix}-c1", f"{prefix}-c2"
out["create"] = outcomes(admin.create_topics([NewTopic(c1, 3, 1, config={"retention.ms": "100000"})]))
out["create_more"] = outcomes(admin.create_topics([
    NewTopic(c2, 2, replica_assignment=[[0], [0]]),
    NewTopic(c1, 1, 1),
    NewTopic(f"{prefix}-c3", 1, 1, config={"retention.ms": "x"}),
    NewTopic(f"{prefix}-c4", 1, 1, config={"no.such.key": "1"}),
]))
out["create_validate_only"] = outcomes(admin.create_topics([NewTopic(f"{prefix}-c5", 3, 5)], validate_only=True))
out["partitions"] = outcomes(admin.create_partitions([NewPartitions(c1, 5), NewPartitions(c2, 1)]))
described = admin.describe_configs([ConfigResource("topic", c1), ConfigResource("broker", "0")])
configs = {}
for resource, future in described.items():
    found = future.result()
    names = ["retention.ms", "cleanup.policy"] if resource.name == c1 else ["log.retention.hours", "log.roll.hours",
                                                                           "log.retention.ms", "num.io.threads",
                                                                           "sasl.kerberos.kinit.cmd",
                                                                           "socket.connection.setup.timeout.ms"]
    configs[resource.name] = {n: [found[n].value, found[n].source, found[n].is_read_only] for n in names}
out["configs"] = configs
out["alter"] = outcomes(admin.alter_configs([
    ConfigResource("topic", c1, set_config={"retention.ms": "5000"}),
    ConfigResource("topic", c2, set_config={"retention.ms": "abc"}),
]))
out["alter_broker"] = outcomes(admin.alter_configs([ConfigResource("broker", "0",
                                                                   set_config={"log.roll.hours": "1"})]))
# librdkafka 1.7's "group" config resource is type 3, which Kafka 3.9 does not know: DescribeConfigs fails as a whole
# (the topic beside it too), AlterConfigs refuses that resource.
errors = {}
unknown_type = [ConfigResource("group", f"{prefix}-g"), ConfigResource("topic", c1)]
for resource, future in admin.describe_configs(unknown_type).items():
    try:
        future.result()
        errors[resource.restype.name.lower()] = None
    except Exception as e:
        errors[resource.restype.name.lower()] = [e.args[0].name(), e.args[0].str()]
out["describe_unknown_type"] = errors
for resource, future in admin.alter_configs([ConfigResource("group", f"{prefix}-g",
                                                            set_config={"x": "1"})]).items():
    try:
        future.result()
        out["alter_unknown_type"] = None
    except Exception as e:
        out["alter_unknown_type"] = [e.args[0].name(), e.args[0].str()]
metadata = admin.list_topics(timeout=10)
out["listed"] = sorted(t for t in metadata.topics if t.startswith(prefix))
out["partitions_of_c1"] = len(metadata.topics[c1].partitions)
out["deleted"] = outcomes(admin.delete_topics([c2], operation_timeout=10))

producer = Producer({"bootstrap.servers": bootstrap})
t0 = int(time.time() * 1000) - 60000
for i in range(10):
    producer.produce(c1, value=b"v", partition=i % 2, timestamp=t0 + i * 1000)
producer.flush(10)

group = f"{prefix}-group"
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                     "enable.auto.offset.store": False})
parts = [TopicPartition(c1, 0), TopicPartition(c1, 1)]
out["watermarks"] = list(consumer.get_watermark_offsets(parts[0], timeout=10))
by_time = consumer.offsets_for_times([TopicPartition(c1, 0, t0 + 3000), TopicPartition(c1, 1, t0 + 100000)],
                                     timeout=10)
out["by_time"] = [p.offset for p in by_time]
consumer.assign([TopicPartition(c1, 0, OFFSET_BEGINNING), TopicPartition(c1, 1, OFFSET_BEGINNING)])
got = 0
deadline = time.time() + 20
while got < 10 and time.time() < deadline:
    message = consumer.poll(0.5)
    if message is not None and message.error() is None:
        got += 1
out["consumed"] = got
out["positions"] = [p.offset for p in consumer.position(parts)]
consumer.store_offsets(offsets=[TopicPartition(c1, 0, 2)])
consumer.commit(asynchronous=False)
consumer.commit(offsets=[TopicPartition(c1, 1, 4)], asynchronous=False)
out["committed"] = [p.offset for p in consumer.committed(parts, timeout=10)]
consumer.incremental_assign([TopicPartition(c1, 2, 0)])
out["assigned"] = sorted(p.partition for p in consumer.assignment())
groups = admin.list_groups(group, timeout=10)
out["groups"] = [[g.id, g.state, g.protocol_type] for g in groups]
consumer.close()
print(json.dumps(out))
