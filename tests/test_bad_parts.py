"""One bad part never stalls the table (issue 10): each case on the real broker and Hudi, the stream committing again
within a few commit intervals, and exactly-once checked as in the other suites."""

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

from hudi_kafka_nb.core.kafka_records import DeadLetter, Lettered, RawRecord
from hudi_kafka_nb.dev.chaos import LocalStack
from hudi_kafka_nb.dev.content import read_letters
from hudi_kafka_nb.dev.producers import DEAD_LETTER_EXPECTED
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok
from hudi_kafka_nb.kafka.dead_letters import DeadLetterQueue

from helpers import read_dead_letters, wait_for


def set_topic_config(bootstrap_servers, topic, **values):
    """Change a topic's settings, and wait until the broker describes them (the controller accepts a change before the
    broker has it)."""
    admin, wanted = (
        AdminClient({"bootstrap.servers": bootstrap_servers}),
        {k.replace("_", "."): str(v) for k, v in values.items()},
    )
    resource = ConfigResource(
        ConfigResource.Type.TOPIC,
        topic,
        incremental_configs=[ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in wanted.items()],
    )
    admin.incremental_alter_configs([resource])[resource].result(timeout=30)

    def described():
        entries = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
        config = next(iter(entries.values())).result(timeout=30)
        return all(config[k].value == v for k, v in wanted.items())

    wait_for(described, 30, f"the broker to describe {wanted} for {topic}")


def produce_raw(bootstrap_servers, topic, records):
    "Produce (partition, value) pairs, each broken on purpose; the next offset of each partition written to."
    ends = {}

    def delivered(error, message):
        assert error is None, error
        ends[(message.topic(), message.partition())] = message.offset() + 1

    producer = Producer({"bootstrap.servers": bootstrap_servers, "message.max.bytes": 8_000_000, "acks": "all"})
    for partition, value in records:  # each broken on purpose: the verdict expects it dead-lettered
        producer.produce(topic, value=value, partition=partition, headers=DEAD_LETTER_EXPECTED, on_delivery=delivered)
    assert producer.flush(30) == 0
    return ends


def test_an_instants_letters_land_once_in_a_transaction_and_one_the_topic_refuses_goes_with_its_headers_only(
    broker, sink_config
):
    """The transactional path on the real broker: an instant's letters and their partition's new position in one
    transaction; the letter the topic refuses as too large goes again without its value; a second participant asks
    where the letters end and finds the position."""
    topic, source = sink_config.dead_letters, (sink_config.topics[0], 3)
    # the limit from the topic's creation on: a limit set later reaches the broker's log a moment after the controller
    # accepts it
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 1, config={"max.message.bytes": "20000"})])[topic].result(timeout=30)
    queue = DeadLetterQueue.for_config(sink_config, "p-1")
    big, small = (
        DeadLetter(RawRecord(source[0], 3, offset, 0, b"k", value), "not valid JSON")
        for offset, value in ((42, b"x" * 100_000), (43, b"y" * 100))
    )
    refused = DeadLetter(RawRecord(source[0], 3, 40, 0, b"k", b"{}"), "Hudi could not write it: …", refused=True)
    stands = Lettered(44, frozenset({40}))
    try:
        # as a participant does: asks, delivers, and asks again after each failure (the batch too large, then the
        # large letter alone), until every letter is in
        undelivered = None
        for _ in range(4):
            if queue.lettered([source]).get(source) == stands:
                break
            undelivered = queue.deliver([big, small, refused], {source: stands}, 30)
        assert undelivered == 0, "every letter reached the topic"
    finally:
        queue.close()
    # the partition's next reader learns where its letters stand, the record Hudi refused among them
    other = DeadLetterQueue.for_config(sink_config, "p-2")
    stalled = DeadLetterQueue.for_config(sink_config, "p-1")
    late = DeadLetter(RawRecord(source[0], 3, 44, 0, b"k", b"{"), "not valid JSON")
    try:
        assert stalled.lettered([source]) == {source: stands}
        # p-1 stalls here, past its partition's move to p-2, whose question fences it: its late letter fails
        assert other.lettered([source]) == {source: stands}
        assert stalled.deliver([late], {source: Lettered(45, stands.refused)}, 10) == 1
        assert other.lettered([source]) == {source: stands}
    finally:
        other.close()
        stalled.close()
    # the refused attempts' letters were aborted, the late one fenced: three letters, one each, read committed
    assert read_letters(broker.bootstrap_servers, topic) == {(source[0], 3, o): 1 for o in (40, 42, 43)}
    letters = sorted(
        read_dead_letters(broker.bootstrap_servers, topic, expected=3),
        key=lambda letter: letter[0]["hudi_kafka_nb.source.offset"],
    )
    _, (big, big_value), (small, small_value) = letters
    assert (big["hudi_kafka_nb.source.offset"], big["hudi_kafka_nb.source.value.bytes"], big_value) == (
        "42",
        "100000",
        None,
    )
    assert "too large" in big["hudi_kafka_nb.value.truncated"]
    assert small_value == b"y" * 100 and "hudi_kafka_nb.value.truncated" not in small


def test_poison_records_alone_in_a_fetch_or_larger_than_the_dead_letter_topic_never_stop_the_stream(broker, tmp_path):
    stack = LocalStack(tmp_path / "stack", participants=1, partitions=2, broker=broker)
    stack.start()
    set_topic_config(broker.bootstrap_servers, stack.topic, max_message_bytes=8_000_000)
    try:
        stack.produce(1_000)
        stack.wait_committed()
        poison = produce_raw(broker.bootstrap_servers, stack.topic, [(0, b"{" + b"x" * 5_000_000), (1, b"not json")])
        stack.ends.update(poison)  # each poison record is the last of its partition
        stack.wait_committed(90)
    finally:
        stack.stop()
    letters = read_dead_letters(broker.bootstrap_servers, stack.params["dead_letter_topic"], expected=2)
    by_offset = {(h["hudi_kafka_nb.source.partition"], h["hudi_kafka_nb.source.offset"]): (h, v) for h, v in letters}
    big_headers, big_value = by_offset[("0", str(poison[(stack.topic, 0)] - 1))]
    assert big_headers["hudi_kafka_nb.source.value.bytes"] == "5000001" and len(big_value) < 262_144
    assert by_offset[("1", str(poison[(stack.topic, 1)] - 1))][1] == b"not json"
    report = stack.verify()
    assert verdict_ok(report) and report["dead_letters"] == 2, verdict(report)


def coordinator_log(stack):
    return (stack.workdir / "coordinator.log").read_text(errors="replace")


def test_a_participant_whose_writes_fail_is_quarantined_and_the_others_carry_on(broker, tmp_path):
    from hudi_kafka_nb.dev.roles import RoleProcess
    from hudi_kafka_nb.table.reading import coordinator_status

    stack = LocalStack(
        tmp_path / "stack",
        participants=1,
        partitions=4,
        broker=broker,
        min_participants=2,
        participant_quarantine_s=600,
    ).start()
    # a misconfigured participant: Hudi refuses its parquet codec on every write
    broken = {**stack.role_params(), "hudi_options": {"hoodie.parquet.compression.codec": "no-such-codec"}}
    stack.roles["participant-broken"] = RoleProcess(
        "participant", broken, stack.workdir, name="participant-broken", direct=True
    ).start()
    try:
        stack.produce(3_000)
        stack.wait_committed(180)
    finally:
        stack.stop()
    assert "state=PARTICIPANT_QUARANTINED participant=participant-broken" in coordinator_log(stack)
    status = coordinator_status(stack.table_path)
    assert "participant-broken" not in status["live_participants"]
    assert "CompressionCodecName.NO-SUCH-CODEC" in status["quarantined_participants"]["participant-broken"]
    report = stack.verify()
    assert verdict_ok(report), verdict(report)


def test_two_sinks_left_on_one_control_topic_both_commit_and_say_why_they_ignore_each_other(broker, tmp_path):
    shared = {"control_topic": f"shared-control-{tmp_path.name[-12:]}"}
    orders = LocalStack(tmp_path / "orders", participants=1, partitions=2, broker=broker, **shared)
    customers = LocalStack(
        tmp_path / "customers", participants=1, partitions=2, broker=broker, table_name="customers", **shared
    )
    try:
        orders.start()
        customers.start()
        orders.produce(1_000)
        customers.produce(1_000)
        orders.wait_committed(180)
        customers.wait_committed(180)
    finally:
        orders.stop()
        customers.stop()
    reports = orders.verify(), customers.verify()
    assert all(map(verdict_ok, reports)), [verdict(r) for r in reports]
    assert "give each table its own control_topic" in coordinator_log(orders)


def test_a_coordinator_restarted_an_hour_behind_the_table_resumes_from_the_latest_commit(broker, tmp_path):
    from hudi_kafka_nb.table.timeline import commit_log

    stack = LocalStack(tmp_path / "stack", participants=1, partitions=2, broker=broker).start()
    try:
        stack.produce(1_000)
        stack.wait_committed()
        stack.kill("coordinator")
        # Hudi takes instant times from the JVM's clock in its time zone: one an hour west is an hour behind
        stack.restart("coordinator", env={"JAVA_TOOL_OPTIONS": "-Duser.timezone=Etc/GMT+1"})
        for _ in range(3):
            stack.produce(500)
            stack.wait_committed(120)
    finally:
        stack.stop()
    instants = [c["instant"] for c in commit_log(stack.table_path)]
    assert len(instants) >= 3 and min(instants[1:]) < instants[0], (
        f"the restarted coordinator's instants are behind the first: {instants}"
    )
    # its last instant, open when it stopped, is behind a completed commit: Hudi rolls it back all the same, at once
    assert stack.roles["coordinator"].process.returncode == 0, "the coordinator did not stop by itself"
    assert "failed while its writers may still be at work" not in coordinator_log(stack)
    report = stack.verify()
    assert verdict_ok(report), verdict(report)
