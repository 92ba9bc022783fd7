"""What only a real Kafka broker can show: the broker killed and restarted mid-transaction, a topic whose head
retention deleted, partitions added while the sink runs (and their watermarks), and consumer-group offsets that Kafka's own tools read."""
import time
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions
from hudi_kafka_nb.chaos import LocalStack, verdict_ok, verify_table
from hudi_kafka_nb.reading import coordinates
from hudi_kafka_nb.timeline import committed_offsets
from hudi_kafka_nb.servers import EmbeddedBroker
from helpers import wait_for


def test_broker_killed_and_restarted_mid_transaction_loses_and_duplicates_nothing(tmp_path):
    broker = EmbeddedBroker(tmp_path / "broker").start()
    stack = LocalStack(tmp_path / "stack", participants=2, broker=broker).start()
    try:
        stack.produce(3_000); stack.wait_committed()
        mark = len((stack.workdir / "coordinator.log").read_text())
        stack.produce(3_000)
        # mid-transaction: END_COMMIT sent, the participants writing the instant's files, nothing decided yet
        wait_for(lambda: "state=COLLECTING" in (stack.workdir / "coordinator.log").read_text()[mark:], 60,
                 "the coordinator to close an instant of the new records", poll_s=0.05)
        broker.kill()                                     # SIGKILL
        time.sleep(2)
        broker.start()                                    # same log directory, same ports
        stack.produce(3_000)
        stack.wait_committed(180)
        assert set(stack.alive()) == set(stack.names), "every role survived the broker restart"
    finally:
        stack.stop(); broker.stop()
    report = verify_table(stack.table_path, stack.ends)
    assert verdict_ok(report) and report["in_table"] == 9_000, report


def test_fresh_start_on_a_truncated_topic_starts_at_its_earliest_offset(broker, tmp_path):
    stack = LocalStack(tmp_path / "stack", participants=1, broker=broker)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    from hudi_kafka_nb.servers import create_topic
    create_topic(broker.bootstrap_servers, stack.topic, stack.partitions)
    stack.produce(4_000)
    deleted = {tp: min(100, end) for tp, end in stack.ends.items()}
    futures = admin.delete_records([TopicPartition(t, p, o) for (t, p), o in deleted.items()])
    for future in futures.values(): future.result(timeout=30)          # as retention would: the head is gone
    for name in stack.names: stack.restart(name)
    try: stack.wait_committed(180)
    finally: stack.stop()
    expected = {(t, p, o) for (t, p), end in stack.ends.items() for o in range(deleted[(t, p)], end)}
    assert coordinates(stack.table_path) == expected
    assert "starting at its earliest available offset 100" in (stack.workdir / "coordinator.log").read_text()


def test_partitions_added_while_the_sink_runs_are_picked_up_without_a_restart(broker, tmp_path):
    stack = LocalStack(tmp_path / "stack", participants=2, partitions=4, broker=broker).start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    try:
        stack.produce(2_000); stack.wait_committed()
        admin.create_partitions([NewPartitions(stack.topic, 8)])[stack.topic].result(timeout=30)
        wait_for(lambda: len(admin.list_topics(stack.topic, timeout=5).topics[stack.topic].partitions) == 8, 30,
                 "the broker's metadata to list the new partitions")
        stack.produce(4_000)
        assert {p for _, p in stack.ends} == set(range(8)), "records went to the new partitions"
        stack.wait_committed(120)
        assert "PARTITIONS_CHANGED" in (stack.workdir / "coordinator.log").read_text()
    finally:
        stack.stop()
    assert verdict_ok(verify_table(stack.table_path, stack.ends))


def test_committed_offsets_are_visible_to_kafkas_own_tooling(broker, tmp_path):
    from confluent_kafka import ConsumerGroupTopicPartitions
    stack = LocalStack(tmp_path / "stack", participants=2, broker=broker, consumer_group=f"lag-{tmp_path.name}").start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})

    def in_group():
        request = ConsumerGroupTopicPartitions(stack.params["consumer_group"], [TopicPartition(t, p) for t, p in stack.ends])
        group = admin.list_consumer_group_offsets([request])[request.group_id].result(timeout=30)
        return {(tp.topic, tp.partition): tp.offset for tp in group.topic_partitions}
    try:
        stack.produce(3_000); stack.wait_committed()
        # the participants commit the group's offsets once the ACK of the commit reaches them
        wait_for(lambda: in_group() == stack.ends, 60, "the group's offsets to reach the produced ends", poll_s=0.5)
    finally:
        stack.stop()
    assert in_group() == committed_offsets(stack.table_path) == stack.ends


def test_the_coordinators_view_reads_watermarks_of_partitions_added_after_it_opened(broker, sink_config):
    from confluent_kafka import Producer
    from hudi_kafka_nb.kafka import BrokerView
    view = BrokerView(sink_config)
    topic = sink_config.topics[0]
    assert view.end_offsets(view.partitions()) == {(topic, p): 0 for p in range(8)}
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_partitions([NewPartitions(topic, 12)])[topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    deadline = time.monotonic() + 30
    while len(view.partitions()) < 12 and time.monotonic() < deadline: time.sleep(0.2)
    producer.produce(topic, b"x", partition=11); producer.flush(30)
    partitions = view.partitions()
    assert len(partitions) == 12
    assert view.end_offsets(partitions) == {**{(topic, p): 0 for p in range(11)}, (topic, 11): 1}
    assert view.earliest_offsets(partitions) == {(topic, p): 0 for p in range(12)}


def test_a_port_taken_before_the_broker_binds_it_is_replaced_by_another(tmp_path):
    # test runs side by side choose free ports at the same moment: one may bind the port the other's broker chose
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0)); taken.listen()
        broker = EmbeddedBroker(tmp_path / "broker")
        broker.controller_port = taken.getsockname()[1]
        try:
            broker.start()
            assert broker.controller_port != taken.getsockname()[1]
            assert "Address already in use" in broker.log_path.read_text(errors="replace")
        finally:
            broker.stop()
