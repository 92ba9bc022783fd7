"""A table that mirrors a database table from Debezium's change events (value_format="debezium"): snapshot reads,
creates, updates, deletes with their tombstones, ids deleted and created again and primary keys changed, some events
wrapped in Kafka Connect's schema/payload, some written in Kafka transactions (one aborted and written again), a few
not events at all. The table ends in the source table's rows, computed without the sink (`SourceTable`); hudi-rs and
Spark's reader agree; the broken events are in the dead-letter topic."""

import pytest

from hudi_kafka_nb.dev.chaos import LocalStack
from hudi_kafka_nb.dev.chaos_run import run_chaos
from hudi_kafka_nb.dev.source_table import CUSTOMERS_SCHEMA, TYPED_COLUMNS, SourceTable, compare_mirror, mirror_ok
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok
from hudi_kafka_nb.table.reading import read_snapshot, snapshot_rows, spark_read
from hudi_kafka_nb.table.timeline import commit_log, table_services_log

from helpers import catalog_query, log_of, read_dead_letters


def logs_since_base(table_path) -> dict[str, int]:
    """Per file group, its log files written since its latest base file (names: `<id>_<token>_<instant>.parquet`,
    `.<id>_<instant>.log.<n>_<token>`)."""
    bases: dict[str, str] = {}
    for base in table_path.rglob("*.parquet"):
        if base.name.startswith("."):
            continue
        file_id, instant = base.name.split("_")[0], base.stem.split("_")[-1]
        bases[file_id] = max(bases.get(file_id, ""), instant)
    logs: dict[str, int] = {}
    for log in table_path.rglob(".*.log.*"):
        if log.name.endswith(".crc") or ".hoodie" in log.parts:
            continue
        file_id, instant = log.name[1:].split(".log.")[0].rsplit("_", 1)
        if instant >= bases.get(file_id, ""):
            logs[file_id] = logs.get(file_id, 0) + 1
    return logs


# a copy-on-write mirror, one on S3 and one transformed are cells of the feature matrix (tests/test_matrix.py)
def test_debezium_change_events_mirror_their_source_table(tmp_path, broker, spark, metastore):
    """The source table is keyed by (tenant, id), and has a NUMERIC(10,2), a DATE and a TIMESTAMP: every event carries
    its Connect schema (`schemas.enable=true`), those in Connect's and Debezium's logical types, and the mirror declares
    them as what they are. Merge-on-read, synced into a Hive Metastore, where Hudi registers it twice: <table>_ro (base
    files) and <table>_rt (the latest rows)."""
    schema = {**CUSTOMERS_SCHEMA, "tenant": "string", **TYPED_COLUMNS}
    stack = LocalStack(
        tmp_path / "stack",
        participants=2,
        partitions=4,
        broker=broker,
        cdc=True,
        table_type="MERGE_ON_READ",
        record_key_field="tenant,id",
        value_schema=schema,
        cdc_metadata=True,
        metastore=metastore,
        hive_sync_database="cdc",
    )
    stack.feed.source = SourceTable(seed=11, broken_every=500, key_columns=("tenant", "id"), typed=True)
    stack.start()
    try:
        # each batch committed before the next: four delta commits or more, so that a merge-on-read table, compacted
        # every three (CDC_SETTINGS), compacts while the changes stream
        stack.produce(800)
        stack.wait_committed(180)  # a snapshot of 200 customers, then about 800 changes
        stack.produce(400, transaction="commit")
        stack.wait_committed(180)
        # what an exactly-once producer leaves after a failure
        stack.produce(400, transaction="abort_then_commit")
        stack.wait_committed(180)
        stack.produce(400)
        stack.wait_committed(180)
    finally:
        stack.stop()
    source = stack.source
    # every column as the source holds it: the decimals, dates and timestamps in their types
    check = compare_mirror(stack.table_path, source.rows, schema)
    assert mirror_ok(check), check
    columns = [*CUSTOMERS_SCHEMA, "tenant"]
    by_spark = {tuple(r) for r in spark_read(spark, stack.table_path).select(*columns).collect()}
    by_hudi_rs = {tuple(r[c] for c in columns) for r in read_snapshot(stack.table_path, columns).to_pylist()}
    assert by_spark == by_hudi_rs == {tuple(row[c] for c in columns) for row in source.rows.values()}
    # found by name in the catalog, its snapshot table holds the source table's rows
    name = f"cdc.{stack.params['table_name']}_rt"
    by_name = catalog_query(metastore.uris, {"rows": f"SELECT {', '.join(columns)} FROM {name}"}, cwd=tmp_path)
    assert {tuple(map(str, r)) for r in by_name["rows"]} == {tuple(map(str, r)) for r in by_spark}, name
    # compacted on schedule: no reader merges more log files than the three delta commits between compactions
    # (file groups this small are rewritten whole, with no log file: Hudi has nothing to compact then)
    assert len(commit_log(stack.table_path)) >= 4
    assert max(logs_since_base(stack.table_path).values(), default=0) <= 3, (
        logs_since_base(stack.table_path),
        table_services_log(stack.table_path),
    )
    kept = read_snapshot(stack.table_path, ["id", "cdc_operation", "cdc_position", "cdc_transaction_id"]).to_pylist()
    assert {r["cdc_operation"] for r in kept} <= {"r", "c", "u"} and all(
        r["cdc_position"] > 0 and r["cdc_transaction_id"] for r in kept if r["cdc_operation"] != "r"
    )
    report = stack.verify()  # the source's rows, and each broken event dead-lettered once
    assert verdict_ok(report) and report["dead_letters"] == source.ops["broken"], verdict(report)
    letters = read_dead_letters(
        broker.bootstrap_servers, stack.params["dead_letter_topic"], expected=source.ops["broken"]
    )
    reasons = [headers["hudi_kafka_nb.error.reason"] for headers, _ in letters]
    assert len(reasons) == source.ops["broken"] and all(r.startswith("not valid JSON") for r in reasons), reasons


@pytest.mark.slow
def test_debezium_change_events_mirror_their_source_table_while_roles_and_the_broker_are_killed(
    tmp_path, broker, spark
):
    """About a minute and a half: six kills among the coordinator, the participants, the table-services job (compacting
    the merge-on-read table beside the sink) and the broker, each role restarting with its own Spark, while every third
    chunk of changes is written in a Kafka transaction (written again when the broker's restart fails it). The
    participants upsert by bucket index (the other change-data tests stage rows for the coordinator): deletes too are
    their log files, merged by the change's position."""
    report = run_chaos(
        tmp_path / "chaos",
        kills=6,
        participants=2,
        broker=broker,
        seed=11,
        cdc=True,
        produce_per_second=400,
        table_services=True,
        table_services_interval_s=3.0,
        hudi_options={
            "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": "4",
            "hoodie.compact.inline.max.delta.commits": "3",
        },
    )
    assert report["ok"], str({k: v for k, v in report.items() if k != "events"})
    columns = list(CUSTOMERS_SCHEMA)
    by_spark = {tuple(r) for r in spark_read(spark, report["table_path"]).select(*columns).collect()}
    # hudi-rs where it reads the table (every bucket compacted once), Spark again where it would miss a bucket
    assert by_spark == {tuple(r[c] for c in columns) for r in snapshot_rows(report["table_path"], columns).to_pylist()}


@pytest.mark.parametrize("converter", ["avro", "json_schema", "protobuf"])
def test_debezium_change_events_through_a_registrys_converter_mirror_their_source_table(
    tmp_path, broker, registry, spark, converter
):
    """The same changes as Debezium writes them with Confluent's Avro converter, its JSON Schema or Protobuf converter:
    envelopes and keys in Confluent's wire format, their schemas in the registry, tombstones null, some in Kafka
    transactions. The table's columns come from the registry's envelope (its row image), and the table ends in the
    source table's rows. Through the Avro converter, the source alters a column after its snapshot (`balance` from REAL
    to DOUBLE PRECISION: a float, then a double): the column widens under the snapshot's rows."""
    from hudi_kafka_nb.dev.broker import create_topic
    from hudi_kafka_nb.dev.converted_changes import (
        CUSTOMER_ROW_REAL,
        as_avro_events,
        as_json_schema_events,
        as_protobuf_events,
    )
    from hudi_kafka_nb.dev.producers import marked_changes, send_events, send_in_transaction

    converted = {"avro": as_avro_events, "json_schema": as_json_schema_events, "protobuf": as_protobuf_events}[
        converter
    ]

    stack = LocalStack(
        tmp_path / "stack",
        participants=1,
        partitions=4,
        broker=broker,
        cdc=True,
        value_converter=converter,
        schema_registry={"url": registry.url},
        value_schema="",
        table_type="MERGE_ON_READ",
    )
    source = stack.source

    def send(events, transaction="", altered=True):
        before = {} if altered or converter != "avro" else {"row": CUSTOMER_ROW_REAL}
        events = converted(marked_changes(events), registry.url, stack.topic, **before)
        stack.feed.add_ends(
            send_in_transaction(broker.bootstrap_servers, stack.topic, events, transaction)
            if transaction
            else send_events(broker.bootstrap_servers, stack.topic, events)
        )

    create_topic(broker.bootstrap_servers, stack.topic, stack.partitions)
    send(source.snapshot(200), altered=False)  # the subjects exist before the sink starts: its columns come from them
    stack.start()
    try:
        stack.wait_committed(180)  # the snapshot in the table, as its columns had it, before the source alters one
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
    if converter == "avro":  # the altered column, widened in place
        assert "widened=balance:float->double" in log_of(stack, "coordinator")
        assert dict(spark_read(spark, stack.table_path).dtypes)["balance"] == "double"
    report = stack.verify()  # the source's rows, and each broken event dead-lettered once
    assert verdict_ok(report) and report["dead_letters"] == source.ops["broken"], verdict(report)
    letters = read_dead_letters(
        broker.bootstrap_servers, stack.params["dead_letter_topic"], expected=source.ops["broken"]
    )
    reasons = [headers["hudi_kafka_nb.error.reason"] for headers, _ in letters]
    assert len(reasons) == source.ops["broken"] and all("not in Confluent's wire format" in r for r in reasons), reasons
