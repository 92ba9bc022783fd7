"""Many topics into many tables with one sink (nbs/00b_routing, nbs/16a_table_host): a coordinator and two
participants, each one process for every table, on the real broker."""
import re, time, uuid
from hudi_kafka_nb.dev.chaos import LocalStack, protocol_log_tail, verdict, verdict_ok, verify_table
from hudi_kafka_nb.dev.producers import produce_orders
from hudi_kafka_nb.dev.servers import create_topic
from hudi_kafka_nb.reading import read_snapshot
from hudi_kafka_nb.timeline import has_committed


def test_one_sink_mirrors_a_table_per_topic_exactly_once_through_kills_and_a_topic_created_while_it_runs(broker, tmp_path):
    """Three topics named as Debezium names them, each into its own table (one partitioned and appended, one upserted by
    key, one unpartitioned); the coordinator and a participant killed and restarted mid-stream; a fourth topic created
    while the sink runs becomes a fourth table. Each table is judged exactly once on its own."""
    stack = LocalStack(tmp_path / "stack", participants=2, broker=broker)
    prefix, suffix, root = f"shop{uuid.uuid4().hex[:6]}", uuid.uuid4().hex[:6], stack.workdir / "tables"
    stack.params.update(topics="", topics_regex=re.escape(prefix) + r"\.public\..*", table_name="{table}",
                        table_path=str(root / "{table_name}"), control_topic=f"control-{suffix}-{{table_name}}",
                        dead_letter_topic=f"dead-{suffix}-{{table_name}}", topic_refresh_s=2.0,
                        tables={"keyed": {"write_operation": "upsert", "record_key_field": "order_id", "ordering_field": "event_time"},
                                "flat": {"partition_field": ""}})
    partitions = {"orders": 4, "keyed": 2, "flat": 1, "late": 2}
    topic = {name: f"{prefix}.public.{name}" for name in partitions}
    ends: dict = {}
    def produce(name, count, first):
        ends.update(produce_orders(broker.bootstrap_servers, topic[name], count, first=first, progress=False, quiet=True))
    def wait_all(names, timeout_s=180):
        deadline = time.monotonic() + timeout_s
        while not all(has_committed(root / n, {tp: e for tp, e in ends.items() if tp[0] == topic[n]}) for n in names):
            assert time.monotonic() < deadline, f"not all of {names} committed; the coordinator's last lines:\n{protocol_log_tail(stack.workdir / 'coordinator.log')}"
            time.sleep(0.5)
    for name in ("orders", "keyed", "flat"): create_topic(broker.bootstrap_servers, topic[name], partitions[name])
    stack.start()
    try:
        for i, name in enumerate(("orders", "keyed", "flat")): produce(name, 1_000, first=i * 100_000)
        wait_all(["orders", "keyed", "flat"])
        for i, name in enumerate(("orders", "keyed", "flat")): produce(name, 1_000, first=i * 100_000 + 1_000)
        stack.kill("participant-0"); stack.kill("coordinator")
        create_topic(broker.bootstrap_servers, topic["late"], partitions["late"]); produce("late", 500, first=300_000)
        stack.restart("coordinator"); stack.restart("participant-0")
        wait_all(list(partitions))
    finally:
        stack.stop()
    for name in partitions:
        report = verify_table(root / name, {tp: e for tp, e in ends.items() if tp[0] == topic[name]})
        assert verdict_ok(report), f"table {name}: {verdict(report)}"
    assert read_snapshot(root / "keyed", ["order_id"]).num_rows == 2_000
