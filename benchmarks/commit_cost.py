"""What one small commit costs the coordinator: run on demand (`make benchmark-commit`), never as a test.

A sink of many tables commits each table on its own, so what bounds it is the fixed cost of one table's commit, whatever
its size. One process drives one table the way the coordinator does (`FencedTable.start_instant`, a participant's staged
rows, `FencedTable.commit`: the upsert of the staged rows with Hudi's write client, then Hudi's commit with the metadata
table, then the metadata table's services) with small instants of a database table's Debezium changes, merge-on-read
then copy-on-write, and prints each step's wall time, the CPU its Spark JVM spent and the Spark stages it ran (medians
over the commits after the first few, once the JVM has warmed up).
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

from hudi_kafka_nb.changes import decode_changes
from hudi_kafka_nb.committer import HudiCommitter
from hudi_kafka_nb.dev.source_table import CDC_SETTINGS, SourceTable
from hudi_kafka_nb.fenced_table import FencedTable
from hudi_kafka_nb.hudi import HudiJava
from hudi_kafka_nb.messages import Checkpoint, PartitionProgress
from hudi_kafka_nb.records import RawRecord
from hudi_kafka_nb.settings import load_config
from hudi_kafka_nb.spark import spark_session
from hudi_kafka_nb.writer import HudiWriter


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


def commit_cost(spark, root: Path, table_type: str, commits: int, changes: int, skip: int) -> list[str]:
    "`commits` instants of about `changes` Debezium changes each into a new table; the steps' medians."
    settings = {k: v for k, v in CDC_SETTINGS.items() if k != "hudi_options"}
    path = root / table_type.lower()
    config = load_config(
        bootstrap_servers="127.0.0.1:1",
        topics=["shop.public.customers"],
        table_path=str(path),
        table_name="customers",
        **{**settings, "table_type": table_type},
    )
    hudi = HudiJava(spark, config)
    committer = HudiCommitter(hudi)
    table, writer = FencedTable(path, committer), HudiWriter(hudi)
    table.take_over("commit-cost")
    meter = Meter(spark)
    for name in ("start an instant", "upsert of the staged rows", "Hudi's commit, metadata table"):
        meter.readings[name] = []  # printed in the order a commit takes them
    meter.wrap(committer, "write_staged", "upsert of the staged rows")
    meter.wrap(committer, "commit", "Hudi's commit, metadata table")
    meter.wrap(committer, "metadata_table_services", "  of which its services")
    source, offset = SourceTable(seed=1), 0
    events = source.snapshot(changes)
    for n in range(commits):
        instant = meter.measure("start an instant", table.start_instant)
        events = events if n == 0 else source.changes(changes)
        records = [RawRecord(config.topics[0], 0, offset + i, 0, k, v) for i, (k, v) in enumerate(events)]
        rows = decode_changes(records, config).rows
        if not rows.num_rows:
            raise RuntimeError(f"none of the {len(events)} changes decoded: nothing to commit")
        staged = writer.write(rows, instant)  # a participant's part: Parquet in the table's store
        progress = [PartitionProgress(config.topics[0], 0, offset, offset + len(events), len(events))]
        offset += len(events)
        checkpoint = Checkpoint(epoch=table.epoch, coordinator_id="commit-cost", partitions=progress)
        meter.measure("whole commit", table.commit, instant, checkpoint, [], "commit-cost", staged_files=staged.staged)
    table.close()
    return [f"{table_type}, {commits} commits of about {changes} changes (medians, the first {skip} left out):"] + (
        meter.report(skip)
    )


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
