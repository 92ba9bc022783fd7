"""Both writer engines produce equivalent Hudi tables, and independent readers (hudi-rs, Spark) agree on them."""
import re
from pathlib import Path
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hudi_kafka_nb.reading import read_incremental, read_snapshot, spark_latest_files, spark_read
from hudi_kafka_nb.writer import spark_session
from table_builder import build_table

BASE_FILE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-\d+_\d+-\d+-\d+_\d{17}\.parquet$")
VOLATILE = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name"]


@pytest.fixture(scope="module")
def spark():
    session = spark_session("tests")
    yield session
    session.stop()          # before interpreter exit, or py4j logs to closed streams


@pytest.fixture(scope="module")
def tables(tmp_path_factory, spark):
    root = tmp_path_factory.mktemp("engines")
    return {engine: (root / engine, build_table(root / engine, engine)[1]) for engine in ("pyarrow", "spark")}


def canonical(path):
    rows = read_snapshot(path)
    rows = rows.drop_columns(VOLATILE)
    return rows.sort_by([("kafka_partition", "ascending"), ("kafka_offset", "ascending")])


def test_engines_write_equivalent_tables(tables):
    (arrow_path, _), (spark_path, _) = tables["pyarrow"], tables["spark"]
    assert canonical(arrow_path).equals(canonical(spark_path))
    arrow_files, spark_files = spark_latest_files(arrow_path), spark_latest_files(spark_path)
    assert pq.read_schema(arrow_files[0]).remove_metadata() == pq.read_schema(spark_files[0]).remove_metadata()
    for name in [Path(f).name for f in arrow_files + spark_files]:
        assert BASE_FILE.match(name), name


@pytest.mark.parametrize("engine", ["pyarrow", "spark"])
def test_hudi_rs_snapshot_time_travel_and_incremental(tables, engine):
    path, instants = tables[engine]
    assert read_snapshot(path, ["kafka_offset"]).num_rows == 9_000
    first = read_snapshot(path, ["kafka_offset", "_hoodie_commit_time"], as_of=instants[0])
    assert first.num_rows == 3_000 and set(first["_hoodie_commit_time"].to_pylist()) == {instants[0]}
    later = read_incremental(path, instants[0], instants[2])        # start is exclusive, end inclusive
    assert later.num_rows == 6_000 and set(later["_hoodie_commit_time"].to_pylist()) == set(instants[1:])


@pytest.mark.parametrize("engine", ["pyarrow", "spark"])
def test_spark_reads_latest_file_slices_like_hudi_rs(tables, spark, engine):
    path, _ = tables[engine]
    frame = spark_read(spark, path)
    assert frame.count() == read_snapshot(path, ["kafka_offset"]).num_rows
    per_region = {r["region"]: r["count"] for r in frame.groupBy("region").count().collect()}
    hudi_rows = read_snapshot(path, ["region"])
    assert per_region == {v["values"]: v["counts"] for v in pc.value_counts(hudi_rows["region"]).to_pylist()}
    assert frame.select("kafka_partition", "kafka_offset").distinct().count() == frame.count()


def test_files_of_a_pending_instant_stay_invisible(tmp_path):
    _, instants = build_table(tmp_path / "t", "pyarrow", commits=2, leave_last_pending=True)
    pending_files = list((tmp_path / "t").rglob(f"*_{instants[-1]}.parquet"))
    assert pending_files, "the pending instant did write files"
    assert read_snapshot(tmp_path / "t", ["kafka_offset"]).num_rows == 3_000
    assert not any(instants[-1] in f for f in spark_latest_files(tmp_path / "t"))


def test_a_rolled_back_instant_leaves_a_hudi_rollback_instant_that_readers_accept(tmp_path, spark):
    from hudi_kafka_nb.table import open_table
    from hudi_kafka_nb.timeline import rollback_commit, timeline
    config, instants = build_table(tmp_path / "t", "pyarrow", commits=2, leave_last_pending=True)
    table = open_table(config)
    deleted = rollback_commit(table, instants[-1], "write timeout")
    assert deleted and not list((tmp_path / "t").rglob(f"*_{instants[-1]}.parquet"))
    actions = [(i.action, i.state) for i in timeline(table)]
    assert actions == [("commit", "completed"), ("rollback", "completed")]
    assert read_snapshot(tmp_path / "t", ["kafka_offset"]).num_rows == 3_000
    assert spark_read(spark, tmp_path / "t").count() == 3_000
