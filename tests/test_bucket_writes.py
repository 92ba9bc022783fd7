"""Upserts by bucket index (`WriteMode.BUCKETS`): participants write their own records as log files of their keys'
buckets, side by side in one instant, and the coordinator only commits. In one Spark, two writers stand for two
participants; the process tests (test_table_features) run the mode under kills."""

from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.config.sink import WriteMode
from hudi_kafka_nb.core.kafka_records import RawRecord
from hudi_kafka_nb.core.messages import Checkpoint, PartitionProgress
from hudi_kafka_nb.formats.records import decode_records
from hudi_kafka_nb.table.committer import HudiCommitter
from hudi_kafka_nb.table.fenced_table import FencedTable
from hudi_kafka_nb.table.hudi import HudiJava
from hudi_kafka_nb.table.reading import read_snapshot
from hudi_kafka_nb.table.timeline import completed_commits
from hudi_kafka_nb.table.writer import HudiWriter


def events(partition: int, offsets: range, keys: range, version: int) -> list[RawRecord]:
    return [
        RawRecord(
            "orders",
            partition,
            offset,
            0,
            None,
            b'{"order_id": "o%d", "region": "%s", "version": %d, '
            b'"writer": %d}' % (key, b"eu" if key % 2 else b"us", version, partition),
        )
        for offset, key in zip(offsets, keys)
    ]


def test_two_participants_upsert_the_same_buckets_into_one_instant_and_each_key_keeps_its_highest_version(
    tmp_path, spark
):
    config = load_config(
        bootstrap_servers="127.0.0.1:1",
        topics=["orders"],
        table_path=str(tmp_path / "t"),
        table_name="orders",
        value_schema={"order_id": "string", "region": "string", "version": "int64", "writer": "int64"},
        partition_field="region",
        write_operation="upsert",
        record_key_field="order_id",
        ordering_field="version",
        table_type="MERGE_ON_READ",
        hudi_options={
            "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": "2",
            "hoodie.compact.inline.max.delta.commits": "2",
        },
    )
    assert config.write_mode is WriteMode.BUCKETS
    table = FencedTable(config.table_path, HudiCommitter(HudiJava(spark, config)))
    writers = [HudiWriter(HudiJava(spark, config)) for _ in range(2)]
    table.take_over("c")
    ends = [0, 0]
    for round in range(3):
        instant = table.start_instant()
        # keys 0-39 through partition 0, keys 20-59 through partition 1 (keys 20-39 moved between partitions): in the
        # first two rounds partition 0 holds their higher version, in the last partition 1 does
        batches = [
            events(0, range(ends[0], ends[0] + 40), range(0, 40), 10 * round + (5 if round < 2 else 0)),
            events(1, range(ends[1], ends[1] + 40), range(20, 60), 10 * round + (0 if round < 2 else 5)),
        ]
        written = [writer.write(decode_records(batch, config)[0], instant) for writer, batch in zip(writers, batches)]
        assert all(w.errors == 0 and w.records == 40 for w in written)
        files = [{path.rsplit("/", 1)[-1].split("_")[0] for path in w.paths} for w in written]
        assert files[0] & files[1], "both participants wrote log files of the same buckets' file groups"
        assert not set(written[0].paths) & set(written[1].paths), "each into its own log file"
        progress = [PartitionProgress("orders", p, ends[p], ends[p] + 40, ends[p] + 40) for p in (0, 1)]
        table.commit(
            instant,
            Checkpoint(epoch=table.epoch, coordinator_id="c", partitions=progress),
            [w.statuses for w in written],
            "c",
        )
        ends = [end + 40 for end in ends]
    # three delta commits, and the compaction after the second
    assert len(completed_commits(config.table_path)) == 4

    # keys 0-19 only ever came through partition 0 (last version 20), keys 40-59 through partition 1 (25); keys 20-39
    # end with partition 1's version 25 of the last round, written into the same instant as partition 0's 20
    expected = {f"o{key}": ((25, 1) if key >= 20 else (20, 0)) for key in range(60)}
    rows = read_snapshot(config.table_path, ["order_id", "version", "writer"]).to_pylist()
    assert len(rows) == 60 and {r["order_id"]: (r["version"], r["writer"]) for r in rows} == expected
    spark_rows = spark.read.format("hudi").load(config.table_path).select("order_id", "version", "writer").collect()
    assert len(spark_rows) == 60 and {r.order_id: (r.version, r.writer) for r in spark_rows} == expected
    # the third commit followed a compaction (every two delta commits): its log files sit on compacted base files
    assert any(f.name.endswith(".parquet") for f in (tmp_path / "t" / "eu").iterdir())
    table.close()


def test_the_next_instant_written_while_the_last_commits_and_compacts_keeps_its_log_files_on_the_compacted_slice(
    tmp_path, spark
):
    """The coordinator opens the next instant before it commits the last (`protocol.commit_state`, "opens early"); here
    the last one's commit also compacts every file group, while the next instant's log files are already written into
    them. Hudi places a log file by when its instant completes: after the compaction, so on the compacted base file."""
    config = load_config(
        bootstrap_servers="127.0.0.1:1",
        topics=["orders"],
        table_path=str(tmp_path / "t"),
        table_name="orders",
        value_schema={"order_id": "string", "region": "string", "version": "int64", "writer": "int64"},
        partition_field="region",
        write_operation="upsert",
        record_key_field="order_id",
        ordering_field="version",
        table_type="MERGE_ON_READ",
        hudi_options={
            "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": "1",
            "hoodie.compact.inline.max.delta.commits": "2",
        },
    )
    assert config.overlaps_instants
    table = FencedTable(config.table_path, HudiCommitter(HudiJava(spark, config)))
    writer = HudiWriter(HudiJava(spark, config))
    table.take_over("c")

    def checkpoint(start, end):
        return Checkpoint(
            epoch=table.epoch, coordinator_id="c", partitions=[PartitionProgress("orders", 0, start, end, end)]
        )

    first = table.start_instant()
    table.commit(
        first,
        checkpoint(0, 20),
        [writer.write(decode_records(events(0, range(0, 20), range(20), 1), config)[0], first).statuses],
        "c",
    )
    second = table.start_instant()
    written = writer.write(decode_records(events(0, range(20, 40), range(20), 2), config)[0], second)
    # opened early: its log files are written before `second` commits
    third = table.start_instant(committing=second)
    later = writer.write(decode_records(events(0, range(40, 50), range(10), 3), config)[0], third)
    table.commit(second, checkpoint(20, 40), [written.statuses], "c")  # the second delta commit: compacts inline
    table.commit(third, checkpoint(40, 50), [later.statuses], "c")
    compactions = [c for c in completed_commits(config.table_path) if c["metadata"].get("operationType") == "COMPACT"]
    assert len(compactions) == 1 and compactions[0]["instant"] > third, "compacted after the third instant opened"
    expected = {f"o{key}": 3 if key < 10 else 2 for key in range(20)}
    spark_rows = spark.read.format("hudi").load(config.table_path).select("order_id", "version").collect()
    assert {r.order_id: r.version for r in spark_rows} == expected and len(spark_rows) == 20
    rows = read_snapshot(config.table_path, ["order_id", "version"]).to_pylist()
    assert {r["order_id"]: r["version"] for r in rows} == expected and len(rows) == 20
    table.close()


def test_an_instant_whose_write_statuses_name_one_file_twice_is_not_committed(tmp_path, spark):
    """Two writes of one file name mean the second replaced the first: its records count as not written (see
    table.committer)."""
    import pytest

    from hudi_kafka_nb.core.ports import RecordsFailed

    config = load_config(
        bootstrap_servers="127.0.0.1:1",
        topics=["orders"],
        table_path=str(tmp_path / "t"),
        table_name="orders",
        value_schema={"order_id": "string", "region": "string", "version": "int64", "writer": "int64"},
        partition_field="region",
        write_operation="upsert",
        record_key_field="order_id",
        ordering_field="version",
        table_type="MERGE_ON_READ",
        hudi_options={"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"},
    )
    table = FencedTable(config.table_path, HudiCommitter(HudiJava(spark, config)))
    writer = HudiWriter(HudiJava(spark, config))
    table.take_over("c")
    instant = table.start_instant()
    written = writer.write(decode_records(events(0, range(0, 10), range(10), 1), config)[0], instant)
    checkpoint = Checkpoint(
        epoch=table.epoch, coordinator_id="c", partitions=[PartitionProgress("orders", 0, 0, 10, 10)]
    )
    with pytest.raises(RecordsFailed) as refused:
        table.commit(instant, checkpoint, [written.statuses, written.statuses], "c")
    assert refused.value.total == 10 and all("one replaced the other" in f.reason for f in refused.value.failed), (
        refused.value
    )
    table.rollback(instant)
    assert completed_commits(config.table_path) == []
    table.close()
