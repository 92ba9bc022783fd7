"""What one small commit costs the coordinator: run on demand (`make benchmark-commit`), never as a test.

A sink of many tables commits each table on its own, so what bounds it is the fixed cost of one table's commit, whatever
its size. One process drives one table the way the coordinator does (`FencedTable.start_instant`, a participant's staged
rows, `FencedTable.commit`: the upsert of the staged rows with Hudi's write client, then Hudi's commit with the metadata
table, then the metadata table's services when due) with small instants of a database table's Debezium changes,
merge-on-read then copy-on-write, and prints each step's wall time, the CPU its Spark JVM spent and the Spark stages it
ran (medians over the commits after the first few, once the JVM has warmed up). Each table type three ways in the one
run, taking turns (`WAYS`): Spark's write client alone, Hudi's own clients as Hudi ships them (the Java client for
small instants, with Hudi's defaults), and the sink's; each way's whole commit as a ratio of Hudi's Java client's, and
each table checked equal to its source. Then where the sink's commit spends its CPU: Java Flight Recorder's samples of
the JVM over more commits, by area of Hudi and Spark (`AREAS`), and a profile of the Python's CPU. `--store s3` puts
the tables in the project's own MinIO (`dev.s3`) instead of a local folder.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import pstats
import statistics
import subprocess
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import msgspec
import psutil

from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.core.kafka_records import RawRecord
from hudi_kafka_nb.core.messages import Checkpoint, PartitionProgress
from hudi_kafka_nb.dev.s3 import EmbeddedS3
from hudi_kafka_nb.dev.source_table import CDC_SETTINGS, SourceTable, compare_mirror, mirror_of, mirror_ok
from hudi_kafka_nb.formats.changes import decode_changes
from hudi_kafka_nb.table.committer import HudiCommitter
from hudi_kafka_nb.table.fenced_table import FencedTable
from hudi_kafka_nb.table.hudi import HudiJava
from hudi_kafka_nb.table.hudi_options import coordinator_options
from hudi_kafka_nb.table.spark import spark_session
from hudi_kafka_nb.table.storage import storage_of
from hudi_kafka_nb.table.writer import HudiWriter


class Meter:
    """Wall seconds, the CPU seconds of the Spark JVM and of this Python process, and the Spark stages of each measured
    call, by name: the coordinator's CPU is both processes'."""

    def __init__(self, spark):
        self.python = psutil.Process()
        self.jvm = next(p for p in self.python.children(recursive=True) if p.name() == "java")
        self.scheduler = spark.sparkContext._jsc.sc().dagScheduler()
        self.readings: dict[str, list[tuple[float, ...]]] = defaultdict(list)

    def _now(self) -> tuple[float, ...]:
        jvm, python = self.jvm.cpu_times(), self.python.cpu_times()
        return (
            time.perf_counter(),
            jvm.user + jvm.system,
            python.user + python.system,
            self.scheduler.nextStageId(),
        )

    def measure(self, name: str, call, *args, **kwargs):
        before = self._now()
        try:
            return call(*args, **kwargs)
        finally:
            after = self._now()
            self.readings[name].append(tuple(a - b for a, b in zip(after, before)))

    def wrap(self, owner, method: str, name: str):
        "Measure every call of `owner.method` as `name`."
        call = getattr(owner, method)
        setattr(owner, method, functools.wraps(call)(lambda *a, **k: self.measure(name, call, *a, **k)))

    def median(self, name: str, skip: int) -> tuple[float, ...]:
        "The medians of `name`'s readings after the first `skip`: wall, JVM CPU, Python CPU, Spark stages."
        kept = self.readings[name][skip:] or self.readings[name]
        return tuple(statistics.median(r[i] for r in kept) for i in range(4))

    def report(self, skip: int) -> list[str]:
        lines = []
        for name in self.readings:
            wall, jvm, python, stages = self.median(name, skip)
            lines.append(
                f"  {name:<34} {wall:6.2f} s wall, {jvm:5.2f} s JVM CPU + {python:5.2f} s Python's,"
                f" {stages:3.0f} Spark stages"
            )
        return lines


WAYS = {
    "Spark": "Hudi's Spark write client writes and commits (where Spark lacks the Java client)",
    "Hudi's Java client": "Hudi's clients as Hudi ships them, with its defaults: the Java client writes the staged "
    "rows (merge-on-read: Spark's) and commits",
    "the sink": "the sink's: the Java client writes merge-on-read's small upserts too (hudikafkanb.MergeOnReadTable); "
    "the staged rows read in the JVM (hudikafkanb.StagedRecords); the metadata table's services and cleaning when due, "
    "record sizes from the latest commit, small bloom filters to start with, no table built for a single writer's "
    "conflict check",
}
# what the sink sets for its small commits that Hudi's defaults do not (table.hudi_options), left out of "Hudi's Java
# client"
SINK_TUNING = ("hoodie.clean.max.commits", "hoodie.record.size.estimation.threshold", "hoodie.index.bloom.num_entries")

# where a sample of the JVM's CPU goes: the first area one of whose names is in a frame of its stack
AREAS = {
    "the metadata table updated with the commit's files": ("BaseHoodieClient.writeTableMetadata",),
    "the metadata table's services": ("HoodieTableMetadataWriter.performTableServices",),
    "a metadata table writer opened as a write begins": ("HoodieBackedTableMetadataWriter.create",),
    "cleaning, planned and run": ("BaseHoodieTableServiceClient.clean",),
    "archival": ("TimelineArchiver",),
    # Hadoop's default settings parsed again from their XML for each Parquet reader Hudi opens (Parquet's builder makes
    # a new Configuration before Hudi hands it the table's)
    "Hadoop's settings parsed again for a Parquet reader": ("Configuration.loadResources",),
    "a base file's bloom filter written": ("HoodieBloomFilterWriteSupport.finalizeMetadata",),
    "compaction, of the table or its metadata table": ("compact",),
    "the index: which file holds each key": ("tagLocation",),
    "the partitioner: record sizes from past commits": ("UpsertPartitioner.<init>", "UpsertPartitioner.assignInserts"),
    "files merged and written": ("handleUpdate", "handleInsert", "handleUpsertPartition", "HoodieAppendHandle"),
    "the staged rows read in the JVM, without Spark": ("hudikafkanb.StagedRecords",),
    "Spark: the staged rows read and written": ("org.apache.spark.", "HoodieCreateRecordUtils"),
    "the table, its timeline and file views loaded": ("HoodieTableMetaClient", "HoodieJavaTable.create", "createTable"),
    "the commit's own metadata and timeline": ("commitStats", "startCommit", "transitionRequestedToInflight"),
    # requests to an object store that no area above made: S3A's and the AWS SDK's own threads
    "the object store's client": ("org.apache.hadoop.fs.s3a.", "software.amazon.awssdk.", "com.amazonaws."),
}


class FlightRecording:
    "Java Flight Recorder in the Spark JVM while a block runs: its CPU samples by area (`AREAS`)."

    def __init__(self, spark, path: Path):
        jvm = spark.sparkContext._jvm
        self.jvm, self.path = jvm, path
        self.recording = jvm.jdk.jfr.Recording(jvm.jdk.jfr.Configuration.getConfiguration("profile"))

    def __enter__(self):
        self.recording.start()
        return self

    def __exit__(self, *exc):
        self.recording.stop()
        self.recording.dump(self.jvm.java.io.File(str(self.path)).toPath())
        self.recording.close()

    def areas(self) -> dict[str, float]:
        "Each area's share of the execution samples, largest first."
        printed = subprocess.run(
            ["jfr", "print", "--json", "--stack-depth", "400", "--events", "jdk.ExecutionSample", str(self.path)],
            capture_output=True,
            check=True,
        ).stdout
        samples = msgspec.json.decode(printed)["recording"]["events"]
        counts: Counter[str] = Counter()
        for sample in samples:
            frames = [
                f"{f['method']['type']['name'].replace('/', '.')}.{f['method']['name']}"
                for f in sample["values"]["stackTrace"]["frames"]
            ]
            counts[next((a for a, names in AREAS.items() if any(n in f for f in frames for n in names)), "other")] += 1
        return {area: n / max(1, len(samples)) for area, n in counts.most_common()}


class Driver:
    "One table driven as the coordinator drives it, one of `WAYS`, its steps measured."

    def __init__(self, spark, root: str, table_type: str, way: str, storage_options: dict[str, str]):
        settings = {k: v for k, v in CDC_SETTINGS.items() if k != "hudi_options"}
        self.config = load_config(
            bootstrap_servers="127.0.0.1:1",
            topics=["shop.public.customers"],
            table_path=f"{root}/{table_type.lower()}-{list(WAYS).index(way)}",
            table_name="customers",
            storage_options=storage_options,
            **{**settings, "table_type": table_type},
        )
        hudi = HudiJava(spark, self.config)
        self.committer = committer = HudiCommitter(hudi)
        if way != "the sink":
            # staged rows read by a Spark job, as Hudi's datasource reads a DataFrame
            committer.staged.jvm_reader = None
        if way == "Spark":
            committer.commit_client.close()
            committer.commit_client = None
        elif way == "Hudi's Java client":
            options = {
                k: v for k, v in coordinator_options(self.config, hudi.avro_schema).items() if k not in SINK_TUNING
            }
            committer.client.close()
            committer.commit_client.close()
            committer.client = hudi.write_client(options)
            committer.commit_client = hudi.H.client.HoodieJavaWriteClient(
                hudi.H.client.common.HoodieJavaEngineContext(hudi.storage_conf),
                hudi.write_config({**options, "hoodie.embed.timeline.server": "false"}),
            )
        self.table, self.writer = FencedTable(hudi.storage, committer), HudiWriter(hudi)
        self.table.take_over("commit-cost")
        self.meter = meter = Meter(spark)
        for name in ("start an instant", "upsert of the staged rows", "Hudi's commit, metadata table"):
            meter.readings[name] = []  # printed in the order a commit takes them
        meter.wrap(committer, "write_staged", "upsert of the staged rows")
        meter.wrap(committer, "commit", "Hudi's commit, metadata table")
        meter.wrap(committer, "metadata_table_services", "  of which its services")
        self.offset, self.events = 0, []

    def commit(self, events: list):
        "One instant of these Debezium change events, staged as a participant stages them, then committed."
        config, table = self.config, self.table
        instant = self.meter.measure("start an instant", table.start_instant)
        records = [RawRecord(config.topics[0], 0, self.offset + i, 0, k, v) for i, (k, v) in enumerate(events)]
        rows = decode_changes(records, config).rows
        if not rows.num_rows:
            raise RuntimeError(f"none of the {len(events)} changes decoded: nothing to commit")
        staged = self.writer.write(rows, instant)  # a participant's part: Parquet in the table's store
        progress = [PartitionProgress(config.topics[0], 0, self.offset, self.offset + len(events), len(events))]
        self.offset += len(events)
        self.events += events
        checkpoint = Checkpoint(epoch=table.epoch, coordinator_id="commit-cost", partitions=progress)
        self.meter.measure(
            "whole commit", table.commit, instant, checkpoint, [], "commit-cost", staged_files=staged.staged
        )


def python_profile(profile: cProfile.Profile, commits: int, table_type: str, top: int = 8) -> list[str]:
    """The coordinator's Python CPU a commit, and the functions that spent most of it themselves (a participant's
    decoding and staging, in the same calls, among them)."""
    stats = pstats.Stats(profile)
    total = stats.total_tt / commits  # type: ignore[attr-defined]
    own = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:top]  # type: ignore[attr-defined]
    lines = [f"{table_type}, the Python of those commits: {total:.3f} CPU-seconds a commit, most of it in:"]
    for (file, line, name), (_, _, own_time, _, _) in own:
        lines.append(f"  {own_time / commits * 1000:6.1f} ms {name} ({Path(file).name}:{line})")
    return lines


def commit_cost(
    spark,
    root: str,
    storage_options: dict[str, str],
    recordings: Path,
    table_type: str,
    commits: int,
    changes: int,
    skip: int,
    profiled: int,
) -> list[str]:
    """`commits` instants of about `changes` Debezium changes each into a table for each of `WAYS`, the ways taking
    turns (the JVM's warming up shared alike); each way's steps' medians, its whole commit's CPU as a ratio of Hudi's
    Java client's, and whether each table ends equal to its source; then `profiled` more commits of the sink's way in a
    flight recording, and where their CPU went."""
    drivers = {way: Driver(spark, root, table_type, way, storage_options) for way in WAYS}
    source = SourceTable(seed=1)
    for n in range(commits):
        events = source.snapshot(changes) if n == 0 else source.changes(changes)
        for driver in drivers.values():
            driver.commit(events)
    lines, whole = [], {}
    for way, driver in drivers.items():
        _, jvm, python, _ = driver.meter.median("whole commit", skip)
        whole[way] = jvm + python
        lines += [f"{table_type}, {WAYS[way]}:"]
        lines += driver.meter.report(skip)
    hudi_cpu = whole["Hudi's Java client"]
    lines.append(
        f"{table_type}, {commits} commits of about {changes} changes (medians, the first {skip} left out), a whole "
        "commit's CPU (the JVM's and Python's) / Hudi's Java client's: "
        + ", ".join(f"{way} {cpu / hudi_cpu:.2f}x ({cpu:.2f} s)" for way, cpu in whole.items())
    )
    sink = drivers["the sink"]
    profile = cProfile.Profile(time.process_time)  # the coordinator's Python: CPU time, not time waiting for the JVM
    with FlightRecording(spark, recordings / f"{table_type.lower()}.jfr") as recording:
        for _ in range(profiled):
            events = source.changes(changes)
            profile.runcall(sink.commit, events)
    lines.append(f"{table_type}, where the sink's commit spends the JVM's CPU ({profiled} commits, Java's samples):")
    lines += [f"  {share:6.1%} {area}" for area, share in recording.areas().items()]
    lines += python_profile(profile, profiled, table_type)
    for way, driver in drivers.items():
        driver.table.close()
        check = compare_mirror(driver.table.path, mirror_of(driver.events))
        lines.append(f"{table_type}, {way}: equal to its source: {mirror_ok(check)} {check}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--changes", type=int, default=50, help="Debezium changes per instant")
    parser.add_argument("--skip", type=int, default=10, help="first commits left out (the JVM warming up)")
    parser.add_argument("--profiled", type=int, default=30, help="commits of the sink's way in the flight recording")
    parser.add_argument(
        "--store", choices=("local", "s3"), default="local", help="the tables' store: a folder, or MinIO"
    )
    args = parser.parse_args()
    recordings = Path(tempfile.mkdtemp(prefix="commit-cost-"))
    with contextlib.ExitStack() as stack:
        if args.store == "s3":  # the project's own MinIO on 127.0.0.1, as tests/test_object_store.py runs it
            s3 = stack.enter_context(EmbeddedS3(recordings / "s3"))
            root, storage_options = s3.url("commit-cost"), s3.storage_options
        else:
            root, storage_options = str(recordings), {}
        probe = load_config(
            bootstrap_servers="127.0.0.1:1",
            topics="t",
            table_path=root,
            table_name="t",
            storage_options=storage_options,
            value_schema={"id": "int64"},
        )
        # with S3A's jars and MinIO's settings where the tables are there
        spark = spark_session("commit-cost", table_path=storage_of(probe))
        print(f"tables in {root}", flush=True)
        for table_type in ("MERGE_ON_READ", "COPY_ON_WRITE"):
            lines = commit_cost(
                spark,
                root,
                storage_options,
                recordings,
                table_type,
                args.commits,
                args.changes,
                args.skip,
                args.profiled,
            )
            print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
