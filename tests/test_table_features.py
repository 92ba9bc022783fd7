"""Hudi's table features through the sink, on the real broker and Hudi: upsert by key (copy-on-write and merge-on-read),
compaction run by the coordinator, and what every reader sees afterwards."""

import os
import time
from pathlib import Path

import pytest

from hudi_kafka_nb.dev.chaos import LocalStack
from hudi_kafka_nb.dev.chaos_run import run_chaos
from hudi_kafka_nb.dev.content import expected_rows, json_values, read_produced
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.dev.producers import REGIONS
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok
from hudi_kafka_nb.table.reading import coordinator_status, read_snapshot, spark_read, table_services_status
from hudi_kafka_nb.table.timeline import (
    commit_log,
    latest_checkpoint_of,
    rust_table,
    table_services_log,
    timeline_sizes,
)

from helpers import order_event, read_dead_letters, wait_for


def services_ran(stack):
    "How often the table-services job ran each service, as its status file says ({} before its first round)."
    status = table_services_status(stack.table_path)
    return status["counts"] if status else {}


def job_log(stack):
    return (stack.workdir / "table-services.log").read_text(errors="replace")


def stop_sink_and_wait_for_archival(stack):
    """Stop the coordinator and the participants, then wait for the job to archive.

    The job archives nothing newer than the metadata table's last compaction, which the coordinator runs after a commit
    while nothing else is pending (table.committer); with ten commits or so that may come only with the sink's stop
    (seen here, 2026-11-24: two minutes of an idle sink and no archival, then archival in the job's first round after
    the stop; with more commits it archives while the sink runs). The suites always asserted archival after the stop."""
    for name in [n for n in stack.roles if n != "table-services"]:
        stack.roles[name].stop(timeout_s=30)
    try:
        wait_for(
            lambda: timeline_sizes(stack.table_path)["archived"] >= 1,
            60,
            "the job to archive once the sink stopped",
            poll_s=0.5,
        )
    except TimeoutError as e:  # the job says what the metadata table's services (and so archival) wait for
        said = [line for line in job_log(stack).splitlines() if "service=metadata_table" in line]
        raise TimeoutError(f"{e}; the job's last word on the metadata table: {said[-1:] or 'none'}") from None


def keyed_stack(tmp_path, broker, **settings):
    return LocalStack(tmp_path / "stack", participants=2, partitions=6, broker=broker, orders=1_500, **settings).start()


def run_keyed(stack, batches=4, per_batch=3_000):
    "Produce in several batches (so that keys are updated across commits), wait for the table, compare with the topic."
    try:
        for _ in range(batches):
            stack.produce(per_batch)
            stack.wait_committed(180)
    finally:
        stack.stop()
    latest = expected_rows(
        read_produced(stack.broker.bootstrap_servers, stack.ends), json_values, "order_id", "event_time"
    )
    return stack.verify(), {key: row for (key,), row in latest.items()}


def test_merge_on_read_compacts_and_every_reader_agrees(tmp_path, broker, spark):
    """About a minute: three batches, each waited for, so that keys update across commits and a compaction (every
    second delta commit) runs between them; then two readers read the merged snapshot."""
    # partitioned by the minute of the event time; an update moves its order to the partition of its latest event
    # (Hudi's global index), so each order has one row across all partitions
    stack = keyed_stack(
        tmp_path,
        broker,
        partition_field="event_minute",
        partition_time_field="event_time",
        partition_time_format="%Y-%m-%d-%H-%M",
        hudi_options={
            "hoodie.compact.inline.max.delta.commits": "2",
            "hoodie.index.type": "GLOBAL_SIMPLE",
            "hoodie.simple.index.update.partition.path": "true",
        },
    )
    report, expected = run_keyed(stack, batches=3)
    assert verdict_ok(report), verdict(report)
    rows = read_snapshot(stack.table_path, ["event_time", "event_minute", "_hoodie_partition_path"])
    minutes = [t.strftime("%Y-%m-%d-%H-%M") for t in rows["event_time"].to_pylist()]
    assert minutes == rows["event_minute"].to_pylist() == rows["_hoodie_partition_path"].to_pylist()
    assert len(set(minutes)) > 3
    compactions = [s for s in table_services_log(stack.table_path) if s["action"] == "compaction"]
    assert compactions, f"no compaction ran after {report['commits']} delta commits"
    assert not any(p.name.endswith(".parquet") and "_" in p.name for p in stack.table_path.glob(".hoodie/.temp/*/*"))
    # hudi-rs's snapshot (merging log files) and Spark's agree with the topic; the read-optimized view is the base files
    # only
    snapshot = {
        r.order_id: r.status for r in spark_read(spark, stack.table_path).select("order_id", "status").collect()
    }
    rows = read_snapshot(stack.table_path, ["order_id", "status"])
    assert (
        snapshot
        == dict(zip(rows["order_id"].to_pylist(), rows["status"].to_pylist()))
        == {k: e["status"] for k, e in expected.items()}
    )
    optimized = (
        spark.read.format("hudi")
        .option("hoodie.datasource.query.type", "read_optimized")
        .load(str(stack.table_path))
        .select("_hoodie_commit_time")
        .distinct()
        .collect()
    )
    compacted = {c["instant"] for c in compactions} | {c["instant"] for c in commit_log(stack.table_path)}
    assert {r._hoodie_commit_time for r in optimized} <= compacted


@pytest.mark.parametrize("write_operation", ["bulk_insert", "upsert"])
def test_new_fields_in_the_events_widen_the_table_and_a_wrong_type_is_dead_lettered(
    tmp_path, broker, spark, write_operation
):
    # two participants write each instant; new fields arrive mid-stream, in some partitions first; old rows read null. A
    # field first seen with whole numbers then meets fractions: its column widens to a double under the rows written.
    # Upserts by bucket index, each participant writing its own log files (tests/test_readers widens a table upserted by
    # the coordinator), compacted after the second commit: the third's log files, wider, sit on narrower base files
    keyed = (
        {
            "write_operation": "upsert",
            "record_key_field": "order_id",
            "ordering_field": "event_time",
            "table_type": "MERGE_ON_READ",
            "hudi_options": {
                "hoodie.index.type": "BUCKET",
                "hoodie.bucket.index.num.buckets": "2",
                "hoodie.compact.inline.max.delta.commits": "2",
            },
        }
        if write_operation == "upsert"
        else {}
    )
    stack = LocalStack(tmp_path / "stack", participants=2, partitions=4, broker=broker, **keyed).start()
    order = order_event
    try:
        stack.send([order(i) for i in range(200)])
        stack.wait_committed(180)
        stack.send(
            [order(i, coupon=f"C{i}", gift=i % 2 == 0, boxes=i % 5) for i in range(200, 400)]
            + [order(i) for i in range(400, 450)]
        )
        stack.wait_committed(180)
        late = [order(i, coupon="LATE", boxes=i + 0.5 if i % 2 else i) for i in range(451, 460)]
        stack.send([order(450, coupon=5)] + late, broken={0})
        stack.wait_committed(180)
    finally:
        stack.stop()
    letters = read_dead_letters(broker.bootstrap_servers, stack.params["dead_letter_topic"], expected=1)
    assert len(letters) == 1 and b'"o450"' in letters[0][1], letters
    reason = letters[0][0]["hudi_kafka_nb.error.reason"]
    assert "does not match value_schema" in reason and "coupon" in reason, reason
    report = stack.verify()  # every other event as sent, coupon and gift in their columns' types
    assert verdict_ok(report), verdict(report)
    expected = {
        f"o{i:03d}": (
            f"C{i}" if 200 <= i < 400 else "LATE" if i > 450 else None,
            i % 2 == 0 if 200 <= i < 400 else None,
            i % 5 if 200 <= i < 400 else (i + 0.5 if i % 2 else i) if i > 450 else None,
        )
        for i in range(460)
        if i != 450
    }
    columns = ["order_id", "coupon", "gift", "boxes"]
    rows = read_snapshot(stack.table_path, columns).to_pylist()
    assert {r["order_id"]: (r["coupon"], r["gift"], r["boxes"]) for r in rows} == expected
    by_spark = spark_read(spark, stack.table_path)
    assert {r.order_id: (r.coupon, r.gift, r.boxes) for r in by_spark.select(*columns).collect()} == expected
    assert dict(by_spark.dtypes)["boxes"] == "double"
    _, checkpoint = latest_checkpoint_of(stack.table_path)
    assert {k: checkpoint.value_schema[k] for k in ("coupon", "gift", "boxes")} == {
        "coupon": "string",
        "gift": "bool",
        "boxes": "double",
    }


# a transform of the kind users write (`transform`): a computed partition column, a computed and a renamed field, a
# nested object flattened, fields left out, a filter
ZONED_ORDERS = """
    SELECT order_id, upper(customer_id) AS customer, amount * quantity AS total, event_time,
           concat('r-', region) AS zone, shipping.country AS ship_to
    FROM <SRC> WHERE status <> 'cancelled'"""
KAFKA_COLUMNS = ("kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_key")


def zoned_order(row: dict) -> dict | None:
    "The row ZONED_ORDERS makes of an order event, as the verdict expects it (computed here, not by the sink's engine)."
    if row["status"] == "cancelled":
        return None
    shaped = {"order_id": row["order_id"], "customer": row["customer_id"].upper(), "event_time": row["event_time"]}
    shaped |= {"total": row["amount"] * row["quantity"], "zone": f"r-{row['region']}"}
    shaped |= {"ship_to": row["shipping"]["country"]}
    return shaped | {name: row[name] for name in KAFKA_COLUMNS}


@pytest.mark.slow
def test_keyed_chaos_random_kills_keep_the_latest_event_of_each_key(tmp_path, broker):
    """About a minute: six kills 2 to 5 s apart and the drain, with upserts (see test_chaos_ten_random_kills), each
    event shaped by a transform on its way in."""
    # by bucket index (the other keyed tests stage their rows for the coordinator): the two participants upsert their
    # own records as log files of the buckets' file groups. Events of one order arrive through different partitions
    # (keyed by customer), so through different participants, out of event-time order, repeated within one instant and
    # across instants, while roles and the broker are killed; the table holds each order's latest event (read by Spark
    # where file groups have no base file yet), nothing was staged, and no killed write left a file behind
    report = run_chaos(
        tmp_path / "chaos",
        kills=6,
        participants=2,
        broker=broker,
        seed=5,
        orders=3_000,
        produce_per_second=500,
        table_type="MERGE_ON_READ",
        hudi_options={
            "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": "4",
            "hoodie.compact.inline.max.delta.commits": "3",
        },
        # the table's rows are the transform's: the verdict compares them with `zoned_order` of each key's latest
        # event it keeps (a key whose events were all cancelled is not in the table)
        value_schema={**DEMO_VALUE_SCHEMA, "shipping": "struct<country: string, express: bool>"},
        transform=ZONED_ORDERS,
        partition_field="zone",
        expected_shape=zoned_order,
    )
    assert report["ok"], str({k: v for k, v in report.items() if k != "events"})
    staging = Path(report["table_path"]) / ".hoodie" / ".aux" / "hudi_kafka_nb" / "staging"
    assert not list(staging.rglob("*.parquet")), "participants write by bucket: nothing is staged"
    columns = {f.name for f in rust_table(report["table_path"]).get_schema() if not f.name.startswith("_hoodie")}
    assert columns == {"order_id", "customer", "total", "event_time", "zone", "ship_to", *KAFKA_COLUMNS}, columns
    assert {p.name for p in Path(report["table_path"]).iterdir()} > {f"r-{region}" for region in REGIONS}


@pytest.mark.slow
def test_table_services_job_beside_an_appending_sink_clusters_cleans_and_archives(tmp_path, broker):
    """About a minute: eight commits, each waited for, are what it takes for retention this tight to leave the job files
    to cluster and clean and instants to archive."""
    # retention small enough that a couple of minutes show cleaning and archival at work
    retention = {
        "hoodie.clean.commits.retained": "2",
        "hoodie.keep.min.commits": "4",
        "hoodie.keep.max.commits": "6",
        "hoodie.clustering.plan.strategy.small.file.limit": "10485760",
    }
    # one participant: the services beside the sink are the subject, and a JVM fewer on two cores is a quicker test
    stack = LocalStack(
        tmp_path / "stack",
        participants=1,
        partitions=6,
        broker=broker,
        table_services=True,
        table_services_interval_s=3.0,
        clustering_sort_columns="event_time",
        hudi_options=retention,
        # no commit may fail because of the services (asserted below): a cold participant's first write of 2,500 orders
        # took 21.5 s under a loaded suite and timed out at the stack's 20 s, an abort the services had no part in
        write_timeout_s=60.0,
    ).start()
    # a field that appears mid-stream: clustering and compaction rewrite files with the table's widened schema, not the
    # one the job started with, so its values survive them
    coupons = {f"n{i:03d}": f"C{i}" for i in range(60)}
    try:
        for round_ in range(8):
            stack.produce(2_500)
            if round_ == 2:
                stack.send([order_event(i, prefix="n", coupon=f"C{i}") for i in range(60)])
            stack.wait_committed(180)
        wait_for(
            lambda: "service=clustering result=" in job_log(stack) and "clean" in services_ran(stack),
            120,
            "the job to have clustered and cleaned",
            poll_s=1,
        )
        stop_sink_and_wait_for_archival(stack)
    finally:
        stack.stop()
    report = stack.verify()
    assert verdict_ok(report), verdict(report)
    status = coordinator_status(stack.table_path)
    assert status["aborts"] == 0, f"the sink's commits must never fail because of the table services: {status}"
    sizes = timeline_sizes(stack.table_path)
    assert sizes["archived"] >= 1 and sizes["active"] <= 20, f"archival keeps the active timeline bounded: {sizes}"
    # archival moves old services off the active timeline: count what the role says it ran
    services = services_ran(stack)
    assert (
        services.get("clustering", 0) >= 1
        and services.get("clean", 0) >= 1
        and not any("failed" in k for k in services)
    ), services
    aux = [p for p in (stack.table_path / ".hoodie" / ".aux" / "hudi_kafka_nb").rglob("*") if p.is_file()]
    assert len(aux) <= 30, f"our bookkeeping stays bounded: {sorted(str(p) for p in aux)}"
    rows = read_snapshot(stack.table_path, ["order_id", "coupon"])
    assert {o: c for o, c in zip(rows["order_id"].to_pylist(), rows["coupon"].to_pylist()) if c is not None} == coupons


@pytest.mark.slow
def test_coordinator_crash_beside_table_services_resumes_exactly_once(tmp_path, broker):
    """About a minute and a half: one stack beside the table-services job lives through a coordinator crash before it
    decides a commit and then one after (two restarts each), and the quarter minute a stale Hudi lock has to live. (Each
    crash had a stack of its own; one start and cold first commit for both saves half a minute of CPU.)"""
    # the coordinator dies before deciding a commit, or after deciding it (rolled forward by its successor, whose client
    # must adopt the instant under Hudi's lazy policy, while the table-services job's cleaner must leave it alone)
    stack = LocalStack(
        tmp_path / "stack",
        participants=1,
        partitions=4,
        broker=broker,
        table_services=True,
        table_services_interval_s=2.0,
    ).start()
    log = stack.workdir / "coordinator.log"
    try:
        stack.produce(2_000)
        stack.wait_committed(180)
        for point in ("after_end_commit", "after_decision"):
            # stopped, not killed: a kill right after a commit may find it holding Hudi's lock, and every writer would
            # then wait a minute for the lock to expire (the lock left behind is this test's own, below, with less time
            # to run)
            stack.roles["coordinator"].stop()
            if point == "after_decision":  # as if it was killed holding Hudi's lock: the lock file stays behind
                # Hudi expires a lock file by its age (hoodie.write.lock.filesystem.expire, whole minutes; ours is 1):
                # one left 45 s ago still blocks the writers that come next, for the quarter of a minute it has left
                lock = stack.table_path / ".hoodie" / "lock"
                lock.touch()
                os.utime(lock, (time.time() - 45, time.time() - 45))
            mark = len(log.read_text())
            stack.restart("coordinator", env={"HUDI_KAFKA_NB_CRASH_AT": point})
            stack.produce(2_000)
            wait_for(lambda: not stack.roles["coordinator"].running(), 240, f"the coordinator to crash at {point}")
            assert f"crash injected at {point}" in log.read_text()[mark:], point
            stack.restart("coordinator")
            stack.produce(1_000)
            stack.wait_committed(180)
            if point == "after_decision":
                assert "rolled forward decided commit" in log.read_text()[mark:]
    finally:
        stack.stop()
    report = stack.verify()
    assert verdict_ok(report) and report["in_table"] == 8_000, verdict(report)


@pytest.mark.slow
def test_table_services_job_beside_an_upserting_sink_compacts_cleans_and_archives(tmp_path, broker):
    """About a minute: ten delta commits, each waited for, give the job scheduled compactions to run, file versions to
    clean and instants to archive."""
    # retention as tight as above: cleans run right after the compactions the coordinator schedules every 2 delta
    # commits
    retention = {
        "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.clean.commits.retained": "2",
        "hoodie.keep.min.commits": "4",
        "hoodie.keep.max.commits": "6",
    }
    stack = LocalStack(
        tmp_path / "stack",
        participants=1,
        partitions=6,
        broker=broker,
        orders=1_500,
        table_services=True,
        table_services_interval_s=3.0,
        hudi_options=retention,
        write_timeout_s=60.0,  # as above: a cold first write under load is no failure of the services
    ).start()
    try:
        for _ in range(10):
            stack.produce(2_000)
            stack.wait_committed(180)
        wait_for(
            lambda: {"compaction", "clean"} <= set(services_ran(stack)),
            120,
            "the job to have compacted and cleaned",
            poll_s=1,
        )
        stop_sink_and_wait_for_archival(stack)
    finally:
        stack.stop()
    report = stack.verify()
    assert verdict_ok(report), verdict(report)
    status = coordinator_status(stack.table_path)
    assert status["aborts"] == 0, f"the sink's commits must never fail because of the table services: {status}"
    services = services_ran(stack)
    assert (
        services.get("compaction", 0) >= 1
        and services.get("clean", 0) >= 1
        and not any("failed" in k for k in services)
    ), services
    sizes = timeline_sizes(stack.table_path)
    assert sizes["archived"] >= 1 and sizes["active"] <= 20, f"archival keeps the active timeline bounded: {sizes}"
    assert not list((stack.table_path / ".hoodie" / ".aux" / "hudi_kafka_nb" / "writing").glob("*")), (
        "no write-by-key mark is left"
    )


def test_no_clean_under_a_write_by_key_whose_timeline_predates_a_compaction(tmp_path, spark):
    """The race behind fencing.keyed_write_in_flight, replayed step by step on Hudi's clients in one process: a
    compaction requested before three of the sink's commits completes after them, and the job's clean then deletes the
    file versions that a write by key with an older timeline needs. Under the coordinator's mark the clean waits. About
    a minute: two runs of commits until a compaction is requested, three commits past it, and a round of services."""
    import random

    from hudi_kafka_nb.config.settings import load_config
    from hudi_kafka_nb.core.kafka_records import RawRecord
    from hudi_kafka_nb.core.messages import Checkpoint, PartitionProgress
    from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
    from hudi_kafka_nb.dev.producers import sample_orders
    from hudi_kafka_nb.formats.records import decode_records
    from hudi_kafka_nb.run.wiring import open_table_services
    from hudi_kafka_nb.table.committer import HudiCommitter
    from hudi_kafka_nb.table.fenced_table import FencedTable
    from hudi_kafka_nb.table.hudi import HudiJava
    from hudi_kafka_nb.table.leftovers import writing_by_key
    from hudi_kafka_nb.table.writer import HudiWriter

    path = str(tmp_path / "table")
    config = load_config(
        bootstrap_servers="127.0.0.1:1",
        topics=["orders"],
        table_path=path,
        table_name="orders",
        partition_field="region",
        value_schema=DEMO_VALUE_SCHEMA,
        write_operation="upsert",
        record_key_field="order_id",
        ordering_field="event_time",
        table_type="MERGE_ON_READ",
        table_services="separate",
        table_services_interval_s=1.0,
        hudi_options={"hoodie.compact.inline.max.delta.commits": "2", "hoodie.clean.commits.retained": "2"},
    )
    hudi = HudiJava(spark, config)
    hudi_java, committer = hudi.H, HudiCommitter(hudi)
    table, writer = FencedTable(path, committer), HudiWriter(hudi)
    table.take_over("c")
    role = open_table_services(config, spark=spark)
    rng, offset = random.Random(3), 0

    def stage(instant):
        nonlocal offset
        events = sample_orders(offset, 400, rng, orders=200)  # updates of 200 orders
        rows, _ = decode_records(
            [RawRecord("orders", 0, offset + i, 1_795_000_000_000 + i, k, v) for i, (k, v) in enumerate(events)], config
        )
        offset += 400
        return writer.write(rows, instant).staged

    def commit(instant, staged):
        progress = PartitionProgress("orders", 0, offset - 400, offset, 400)
        table.commit(
            instant,
            Checkpoint(epoch=table.epoch, coordinator_id="c", partitions=[progress]),
            [],
            "c",
            staged_files=staged,
        )

    def commits_past_a_compaction():
        while not role.services.pending_compactions():
            instant = table.start_instant()
            commit(instant, stage(instant))
        for _ in range(3):
            instant = table.start_instant()
            commit(instant, stage(instant))

    def located(stale_table, instant, staged):
        "How many of the staged rows the index of `stale_table` (a write's view of the table) finds in the table."
        records = hudi_java.data.HoodieJavaRDD.of(
            committer.staged.as_rdd(instant, staged, committer.client.getConfig())
        )
        tagged = stale_table.getIndex().tagLocation(records, hudi.engine_context(), stale_table)
        return sum(bool(r.isCurrentLocationKnown()) for r in hudi_java.data.HoodieJavaRDD.getJavaRDD(tagged).collect())

    try:
        # without the mark: the round compacts, then cleans; the stale view loses file groups (Hudi 1.2 as pinned)
        commits_past_a_compaction()
        instant = table.start_instant()
        staged = stage(instant)
        stale = hudi_java.table.HoodieSparkTable.create(committer.client.getConfig(), hudi.engine_context())
        ran = role.run_round()
        assert any(k.startswith("compaction") for k in ran) and ran.get("clean", 0) > 0, ran
        fresh = hudi_java.table.HoodieSparkTable.create(committer.client.getConfig(), hudi.engine_context())
        assert located(stale, instant, staged) < located(fresh, instant, staged), (
            "Hudi's stale view no longer loses file groups to a clean: keyed_write_in_flight may be unneeded"
        )
        table.rollback(instant)
        offset -= 400
        # under the mark (as FencedTable writes staged rows): the round compacts, the clean waits; every key is found
        commits_past_a_compaction()
        instant = table.start_instant()
        staged = stage(instant)
        with writing_by_key(path, instant):
            stale = hudi_java.table.HoodieSparkTable.create(committer.client.getConfig(), hudi.engine_context())
            ran = role.run_round()
            assert any(k.startswith("compaction") for k in ran) and "clean" not in ran, ran
            fresh = hudi_java.table.HoodieSparkTable.create(committer.client.getConfig(), hudi.engine_context())
            assert located(stale, instant, staged) == located(fresh, instant, staged)
        commit(instant, staged)
        rows = spark.read.format("hudi").load(path)
        assert rows.count() == rows.select("order_id").distinct().count(), "no key twice"
    finally:
        role.close()
        table.close()


def test_local_tables_are_written_by_hadoops_file_system_without_a_chmod_process(tmp_path, spark):
    """A local Spark writes file: paths through our LocalFileSystemWithoutShell (table.spark), which sets permissions
    without a `chmod` process: those Hadoop gives a new folder and file (its defaults less its umask), the checksum file
    beside."""
    jvm = spark._jvm
    fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI("file:///"), spark._jsc.hadoopConfiguration())
    assert fs.getClass().getName() == "hudikafkanb.LocalFileSystemWithoutShell"
    fs.create(jvm.org.apache.hadoop.fs.Path(f"file://{tmp_path}/folder/file"), True).close()

    def mode(p):
        return oct(p.stat().st_mode & 0o7777)

    assert (mode(tmp_path / "folder"), mode(tmp_path / "folder" / "file")) == ("0o755", "0o644")
    assert (tmp_path / "folder" / ".file.crc").exists()


def test_a_local_folder_lists_as_hadoop_lists_it(tmp_path, spark):
    """Our file system lists a folder with a `stat` an entry (table.spark): each entry's status is Hadoop's own (path,
    size, folder or not, time, owner, permission), names that a URI quotes or that hold a colon too."""
    jvm = spark._jvm
    fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI("file:///"), spark._jsc.hadoopConfiguration())
    for name in ["20261204093500123.commit", "a b%c", "x:y", "part=1", ".hoodie_partition_metadata"]:
        (tmp_path / name).write_text(name)
    (tmp_path / "sub folder").mkdir()
    (tmp_path / "a b%c").chmod(0o600)
    (tmp_path / "link").symlink_to(tmp_path / "part=1")
    folder = jvm.org.apache.hadoop.fs.Path(f"file://{tmp_path}")
    hadoop = jvm.org.apache.hadoop.fs.RawLocalFileSystem()
    hadoop.initialize(jvm.java.net.URI("file:///"), spark._jsc.hadoopConfiguration())

    def statuses(listing):
        return sorted(
            (
                s.getPath().toString(),
                s.getLen(),
                s.isDirectory(),
                s.getModificationTime(),
                s.getOwner(),
                s.getGroup(),
                s.getPermission().toShort(),
            )
            for s in listing
        )

    ours = statuses(fs.getRawFileSystem().listStatus(folder))
    assert ours == statuses(hadoop.listStatus(folder)) and len(ours) == 7, ours
    assert statuses(fs.listStatus(jvm.org.apache.hadoop.fs.Path(f"file://{tmp_path}/x:y"))) == statuses(
        hadoop.listStatus(jvm.org.apache.hadoop.fs.Path(f"file://{tmp_path}/x:y"))
    )
