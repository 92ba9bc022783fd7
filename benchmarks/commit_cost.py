"""What one small commit costs the coordinator: run on demand (`make benchmark-commit`), never as a test.

A sink of many tables commits each table on its own, so what bounds it is the fixed cost of one table's commit, whatever
its size. One process drives one table the way the coordinator does (`FencedTable.start_instant`, a participant's staged
rows, `FencedTable.commit`: the upsert of the staged rows with Hudi's write client, then Hudi's commit with the metadata
table, then the metadata table's services) with small instants of a database table's Debezium changes, merge-on-read
then copy-on-write, and prints each step's wall time, the CPU its Spark JVM spent and the Spark stages it ran (medians
over the commits after the first few, once the JVM has warmed up). Each table type three ways in the one run, taking
turns (`WAYS`): Spark's write client writing and committing (what the coordinator did before, and does where Spark lacks
Hudi's Java client), Spark's writing and the Java client committing (what it does with large instants), the Java client
writing and committing (small instants); each way's whole commit as a ratio of Spark's, and each table checked equal to
its source.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import psutil

from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.core.kafka_records import RawRecord
from hudi_kafka_nb.core.messages import Checkpoint, PartitionProgress
from hudi_kafka_nb.dev.source_table import CDC_SETTINGS, SourceTable, compare_mirror, mirror_of, mirror_ok
from hudi_kafka_nb.formats.changes import decode_changes
from hudi_kafka_nb.table.committer import HudiCommitter
from hudi_kafka_nb.table.fenced_table import FencedTable
from hudi_kafka_nb.table.hudi import HudiJava
from hudi_kafka_nb.table.spark import spark_session
from hudi_kafka_nb.table.writer import HudiWriter


class Meter:
    "Wall seconds, the Spark JVM's CPU seconds and Spark stages of each measured call, by name."

    def __init__(self, spark):
        self.jvm = next(p for p in psutil.Process().children(recursive=True) if p.name() == "java")
        self.scheduler = spark.sparkContext._jsc.sc().dagScheduler()
        self.readings: dict[str, list[tuple[float, float, int]]] = defaultdict(list)

    def _now(self) -> tuple[float, float, int]:
        times = self.jvm.cpu_times()
        return time.perf_counter(), times.user + times.system, self.scheduler.nextStageId()

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

    def report(self, skip: int) -> list[str]:
        lines = []
        for name, readings in self.readings.items():
            kept = readings[skip:] or readings
            wall, cpu, stages = (statistics.median(r[i] for r in kept) for i in range(3))
            lines.append(f"  {name:<34} {wall:6.2f} s wall, {cpu:5.2f} s JVM CPU, {stages:3.0f} Spark stages")
        return lines


WAYS = {
    "Spark": "Hudi's Spark write client writes and commits (where Spark lacks the Java client)",
    "Spark write, Java commit": "Spark's client writes the staged rows, Hudi's Java client commits (large instants)",
    "Java": "Hudi's Java client writes the staged rows (merge-on-read: Spark's) and commits (small instants)",
}


class Driver:
    "One table driven as the coordinator drives it, one of `WAYS`, its steps measured."

    def __init__(self, spark, root: Path, table_type: str, way: str):
        settings = {k: v for k, v in CDC_SETTINGS.items() if k != "hudi_options"}
        path = root / f"{table_type.lower()}-{list(WAYS).index(way)}"
        self.config = load_config(
            bootstrap_servers="127.0.0.1:1",
            topics=["shop.public.customers"],
            table_path=str(path),
            table_name="customers",
            **{**settings, "table_type": table_type},
        )
        hudi = HudiJava(spark, self.config)
        self.committer = committer = HudiCommitter(hudi)
        if way == "Spark":
            committer.commit_client.close()
            committer.commit_client = None
        elif way == "Spark write, Java commit":
            committer.JAVA_WRITE_MAX_RECORDS = 0
        self.table, self.writer = FencedTable(path, committer), HudiWriter(hudi)
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


def commit_cost(spark, root: Path, table_type: str, commits: int, changes: int, skip: int) -> list[str]:
    """`commits` instants of about `changes` Debezium changes each into a table for each of `WAYS`, the ways taking
    turns (the JVM's warming up shared alike); each way's steps' medians, its whole commit's CPU as a ratio of Spark's,
    and whether each table ends equal to its source."""
    drivers = {way: Driver(spark, root, table_type, way) for way in WAYS}
    source = SourceTable(seed=1)
    for n in range(commits):
        events = source.snapshot(changes) if n == 0 else source.changes(changes)
        for driver in drivers.values():
            driver.commit(events)
    lines, whole = [], {}
    for way, driver in drivers.items():
        driver.table.close()
        check = compare_mirror(driver.config.table_path, mirror_of(driver.events))
        whole[way] = statistics.median(r[1] for r in driver.meter.readings["whole commit"][skip:])
        lines += [f"{table_type}, {WAYS[way]}; equal to its source: {mirror_ok(check)} {check}"]
        lines += driver.meter.report(skip)
    spark_cpu = whole["Spark"]
    lines.append(
        f"{table_type}, {commits} commits of about {changes} changes (medians, the first {skip} left out), a whole "
        "commit's JVM CPU / Spark's: " + ", ".join(f"{way} {cpu / spark_cpu:.2f}x" for way, cpu in whole.items())
    )
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--changes", type=int, default=50, help="Debezium changes per instant")
    parser.add_argument("--skip", type=int, default=10, help="first commits left out (the JVM warming up)")
    args = parser.parse_args()
    spark = spark_session("commit-cost")
    root = Path(tempfile.mkdtemp(prefix="commit-cost-"))
    for table_type in ("MERGE_ON_READ", "COPY_ON_WRITE"):
        print("\n".join(commit_cost(spark, root, table_type, args.commits, args.changes, args.skip)), flush=True)


if __name__ == "__main__":
    main()
