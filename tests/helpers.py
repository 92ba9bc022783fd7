"""Helpers shared by the pytest suites."""
from confluent_kafka import Consumer, TopicPartition
from hudi_kafka_nb.reading import commit_log


def produced_coordinates(ends):
    """Every (topic, partition, offset) written to fresh topics whose next offsets are `ends`."""
    return {(t, p, o) for (t, p), end in ends.items() for o in range(end)}


def read_dead_letters(bootstrap_servers, topic, expected, timeout_s=30):
    """The dead-letter records of `topic` as (headers dict, value), until `expected` are read."""
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": f"check-{topic}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    letters = []
    import time
    deadline = time.monotonic() + timeout_s
    while len(letters) < expected and time.monotonic() < deadline:
        for m in consumer.consume(500, timeout=0.5):
            if m.error() is None:
                letters.append(({k: v.decode() for k, v in m.headers() or []}, m.value()))
    consumer.close()
    return letters


def assert_offsets_continue(table_path):
    """Invariant 2: each commit's start offsets are the previous commit's next offsets."""
    committed = {}
    for commit in commit_log(table_path):
        for tp, (start, end) in commit["offsets"].items():
            assert committed.get(tp, start) == start, f"{commit['instant']}: {tp} starts at {start}, previous ended at {committed.get(tp)}"
            committed[tp] = end
    return committed
