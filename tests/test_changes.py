"""A table that mirrors a database table from Debezium's change events (value_format="debezium"): snapshot reads,
creates, updates, deletes with their tombstones, ids deleted and created again and primary keys changed, some events
wrapped in Kafka Connect's schema/payload, some written in Kafka transactions (one aborted and written again), a few
not events at all. The table ends in the source table's rows, computed without the sink (`SourceTable`), on
copy-on-write and on merge-on-read; hudi-rs and Spark's reader agree; the broken events are in the dead-letter topic."""
import pytest
from hudi_kafka_nb.dev.chaos import LocalStack, run_chaos
from hudi_kafka_nb.reading import read_snapshot, spark_read
from hudi_kafka_nb.dev.source_table import CUSTOMERS_SCHEMA, compare_mirror, mirror_ok
from helpers import read_dead_letters


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_debezium_change_events_mirror_their_source_table(tmp_path, broker, spark, table_type):
    stack = LocalStack(tmp_path / "stack", participants=2, partitions=4, broker=broker, cdc=True, table_type=table_type,
                       cdc_metadata=table_type == "MERGE_ON_READ").start()
    try:
        stack.produce(800)                                     # a snapshot of 200 customers, then about 800 changes
        stack.produce(400, transaction="commit")
        stack.produce(400, transaction="abort_then_commit")    # what an exactly-once producer leaves after a failure
        stack.produce(400)
        stack.wait_committed(180)
    finally:
        stack.stop()
    source = stack.source
    check = compare_mirror(stack.table_path, source.rows)
    assert mirror_ok(check), check
    columns = list(CUSTOMERS_SCHEMA)
    by_spark = {tuple(r) for r in spark_read(spark, stack.table_path).select(*columns).collect()}
    by_hudi_rs = {tuple(r[c] for c in columns) for r in read_snapshot(stack.table_path, columns).to_pylist()}
    assert by_spark == by_hudi_rs == {tuple(row[c] for c in columns) for row in source.rows.values()}
    if table_type == "MERGE_ON_READ":
        kept = read_snapshot(stack.table_path, ["id", "cdc_operation", "cdc_position", "cdc_transaction_id"]).to_pylist()
        assert {r["cdc_operation"] for r in kept} <= {"r", "c", "u"} and all(r["cdc_position"] > 0 and r["cdc_transaction_id"] for r in kept
                                                                          if r["cdc_operation"] != "r")
    letters = read_dead_letters(broker.bootstrap_servers, stack.params["dead_letter_topic"], expected=source.ops["broken"])
    reasons = [headers["hudi_kafka_nb.error.reason"] for headers, _ in letters]
    assert len(reasons) == source.ops["broken"] and all(r.startswith("not valid JSON") for r in reasons), reasons


@pytest.mark.slow
def test_debezium_change_events_mirror_their_source_table_while_roles_and_the_broker_are_killed(tmp_path, broker, spark):
    """About a minute and a half: six kills among the coordinator, the participants, the table-services job (compacting
    the merge-on-read table beside the sink) and the broker, each role restarting with its own Spark, while every third
    chunk of changes is written in a Kafka transaction (written again when the broker's restart fails it)."""
    report = run_chaos(tmp_path / "chaos", kills=6, participants=2, broker=broker, seed=11, cdc=True, produce_per_second=1_000,
                       table_services=True, table_services_interval_s=3.0)
    assert report["ok"], str({k: v for k, v in report.items() if k != "events"})
    columns = list(CUSTOMERS_SCHEMA)
    by_spark = {tuple(r) for r in spark_read(spark, report["table_path"]).select(*columns).collect()}
    assert by_spark == {tuple(r[c] for c in columns) for r in read_snapshot(report["table_path"], columns).to_pylist()}


def test_debezium_change_events_through_the_avro_converter_mirror_their_source_table(tmp_path, broker, registry, spark):
    """The same changes as Debezium writes them with Confluent's Avro converter: envelopes and keys in Confluent's wire
    format, their schemas in the registry, tombstones null, some in Kafka transactions. The table's columns come from the
    registry's envelope (its row image), and the table ends in the source table's rows."""
    from hudi_kafka_nb.dev.producers import send_events, send_in_transaction
    from hudi_kafka_nb.dev.servers import create_topic
    from hudi_kafka_nb.dev.source_table import as_avro_events
    stack = LocalStack(tmp_path / "stack", participants=1, partitions=4, broker=broker, cdc=True, value_converter="avro",
                       schema_registry={"url": registry.url}, value_schema="", table_type="MERGE_ON_READ")
    source = stack.source
    def send(events, transaction=""):
        events = as_avro_events(events, registry.url, stack.topic)
        stack._add_ends(send_in_transaction(broker.bootstrap_servers, stack.topic, events, transaction) if transaction else
                        send_events(broker.bootstrap_servers, stack.topic, events))
    create_topic(broker.bootstrap_servers, stack.topic, stack.partitions)
    send(source.snapshot(200))                   # the subjects exist before the sink starts: its columns come from them
    stack.start()
    try:
        send(source.changes(800))
        send(source.changes(400), transaction=f"{stack.topic}-tx")
        send(source.changes(400))
        stack.wait_committed(180)
    finally:
        stack.stop()
    check = compare_mirror(stack.table_path, source.rows)
    assert mirror_ok(check), check
    columns = list(CUSTOMERS_SCHEMA)
    by_spark = {tuple(r) for r in spark_read(spark, stack.table_path).select(*columns).collect()}
    assert by_spark == {tuple(row[c] for c in columns) for row in source.rows.values()}
    letters = read_dead_letters(broker.bootstrap_servers, stack.params["dead_letter_topic"], expected=source.ops["broken"])
    reasons = [headers["hudi_kafka_nb.error.reason"] for headers, _ in letters]
    assert len(reasons) == source.ops["broken"] and all("not in Confluent's Avro wire format" in r for r in reasons), reasons
