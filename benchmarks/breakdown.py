"""Where a participant's and a coordinator's time goes: figure (j) of `make benchmark`, never a test.

One process takes the backlog through the sink's own stages, one after the other, in instants of the sink's size, with
the sink's own parts: the participant's consumer (`KafkaSource`), its decoder (`decode_batch`), the hand-over of Arrow
rows to Spark (`arrow_frame`), Hudi's row writer (`HudiWriter`), and the coordinator's commit (`FencedTable.commit`:
the decision, Hudi's commit with the metadata table, the inline services) and its next instant (`start_instant`).
Because the stages run in turn, each one's wall time and CPU time (this process and its Spark JVM) is its own.

The ceiling is Hudi's row writer alone on the same rows, already in Spark (each instant's rows cached in the JVM first),
into a second table with the same settings: what the sink would reach if everything but Hudi's write cost nothing.
What a write from Arrow rows costs beyond that one is `Arrow → Spark`: the hand-over (`arrow_frame`), and Spark's
reading of the handed-over rows inside Hudi's write (that write's time less the writer alone's).
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pyarrow as pa
from pyspark import StorageLevel

from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.core.messages import Checkpoint, PartitionProgress, PartitionStart
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.formats.records import decode_batch
from hudi_kafka_nb.kafka.source import KafkaSource
from hudi_kafka_nb.table.committer import HudiCommitter
from hudi_kafka_nb.table.fenced_table import FencedTable
from hudi_kafka_nb.table.hudi import HudiJava
from hudi_kafka_nb.table.spark import arrow_frame, spark_session
from hudi_kafka_nb.table.writer import HudiWriter

STAGES = {
    "consume": "consume (confluent-kafka, the participant's consumer)",
    "decode": "decode (JSON → Arrow, the participant's decoder)",
    "to_spark": "Arrow → Spark: the hand-over (an Arrow stream the JVM reads)",
    "rows_in_spark": "Arrow → Spark: Spark's reading of the rows in Hudi's write",
    "write": "Hudi's write (the row writer alone, rows in Spark)",
    "commit": "commit (decision, Hudi's commit and metadata table, services, next instant)",
}


def tree_cpu_s(pid: int, kind: str = "") -> float:
    """CPU seconds so far of process `pid` and its children (a role's papermill, kernel and Spark JVM; this process's
    JVM), with the children they have reaped (a JVM's short-lived `chmod` and `ls`: Hadoop's local file system without
    its native library); with `kind` "JVM" only its Java processes, with "Python" only the others."""
    try:
        procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            if kind and (proc.name() == "java") != (kind == "JVM"):
                continue
            t = proc.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.NoSuchProcess:
            pass
    return total


def process_cpu_s() -> float:
    return tree_cpu_s(os.getpid())


@dataclass
class Stopwatch:
    "Wall and CPU seconds per stage, summed over the drain."

    wall: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    cpu: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))

    def timed(self, stage: str, run, *args):
        wall, cpu = time.perf_counter(), process_cpu_s()
        result = run(*args)
        self.wall[stage] += time.perf_counter() - wall
        self.cpu[stage] += process_cpu_s() - cpu
        return result


def table_config(broker, topic: str, path: Path, per_instant: int):
    "The benchmark sink's settings (`throughput.sink_rate`), for a table at `path`."
    return load_config(
        bootstrap_servers=broker.bootstrap_servers,
        topics=[topic],
        table_path=str(path),
        table_name="bench",
        partition_field="region",
        value_schema=DEMO_VALUE_SCHEMA,
        max_buffered_records=per_instant,
    )


def read_instant(source: KafkaSource, config, starts: dict, ends: dict, per_instant: int) -> list:
    "The next instant's records (batches of `max_batch_records`), at most `per_instant`, from `starts` up to `ends`."
    batches, count = [], 0
    while count < per_instant and any(starts[tp] < end for tp, end in ends.items()):
        batch = [
            r
            for r in source.read(min(config.max_batch_records, per_instant - count), timeout_s=0.1)
            if r.offset < ends[(r.topic, r.partition)]
        ]
        for r in batch:
            starts[(r.topic, r.partition)] = max(starts[(r.topic, r.partition)], r.offset + 1)
        if batch:
            batches.append(batch)
            count += len(batch)
    return batches


def decode_all(batches: list, config) -> list[pa.Table]:
    "Each batch's rows, decoded as a participant decodes what one read returned."
    return [decode_batch(batch, config, discover=False).rows for batch in batches]


def stage_breakdown(broker, topic: str, ends: dict, per_instant: int, root: Path) -> dict:
    """The backlog `ends` of `topic` through the sink's stages in one process, in instants of `per_instant` records;
    then Hudi's writer alone on the same rows. {'wall', 'cpu', 'records', 'instants', 'writer_alone_rate'}."""
    config = table_config(broker, topic, root / "table", per_instant)
    # more heap than a role's: the writer-alone pass holds an instant's rows cached in the JVM beside their hand-over
    spark = spark_session("breakdown", memory="3g", table_path=config.table_path)
    hudi = HudiJava(spark, config)
    table, writer = FencedTable(hudi.storage, HudiCommitter(hudi)), HudiWriter(hudi)
    table.take_over("breakdown")
    watch, frames, records, offsets = Stopwatch(), [], 0, dict.fromkeys(ends, 0)
    source = KafkaSource(config, f"breakdown-{uuid.uuid4().hex[:6]}")
    source.assign([PartitionStart(t, p, 0) for t, p in ends])
    warm = True
    instant = table.start_instant()
    while any(offsets[tp] < end for tp, end in ends.items()):
        starts = dict(offsets)
        batches = watch.timed("consume", read_instant, source, config, offsets, ends, per_instant)
        rows = pa.concat_tables(watch.timed("decode", decode_all, batches, config))
        # the first instant's rows once, not counted: every stage below then runs warm, as in a running sink
        if warm:
            writer.write(rows, instant)
            table.rollback(instant)
            instant = table.start_instant()
            warm = False
        frame = watch.timed("to_spark", arrow_frame, spark, rows, hudi.struct)
        written = watch.timed("rows_in_spark", writer.write_frame, frame, instant)
        frames.append(rows)
        checkpoint = Checkpoint(
            epoch=table.epoch,
            coordinator_id="breakdown",
            partitions=[
                PartitionProgress(t, p, starts[(t, p)], offsets[(t, p)], offsets[(t, p)] - starts[(t, p)])
                for t, p in sorted(ends)
            ],
        )
        watch.timed("commit", table.commit, instant, checkpoint, [written.statuses], "breakdown")
        records += written.records
        if any(offsets[tp] < end for tp, end in ends.items()):
            instant = watch.timed("commit", table.start_instant)
    source.close()
    # Hudi's writer alone on the same rows, each instant's cached in Spark first, into a table of its own
    alone_config = table_config(broker, topic, root / "writer-alone", per_instant)
    alone_hudi = HudiJava(spark, alone_config)
    alone_table, alone_writer = HudiCommitter(alone_hudi), HudiWriter(alone_hudi)
    alone_wall, alone_cpu = 0.0, 0.0
    for rows in frames:
        cached = arrow_frame(spark, rows, alone_hudi.struct).persist(StorageLevel.MEMORY_AND_DISK)
        cached.count()
        instant = alone_table.start_instant()
        wall, cpu = time.perf_counter(), process_cpu_s()
        alone_writer.write_frame(cached, instant)
        alone_wall += time.perf_counter() - wall
        alone_cpu += process_cpu_s() - cpu
        alone_table.rollback(instant)
        cached.unpersist()
    spark.stop()
    # the write from Arrow rows, less the same write from rows already in Spark: what the hand-over costs
    watch.wall["rows_in_spark"] -= alone_wall
    watch.cpu["rows_in_spark"] -= alone_cpu
    watch.wall["write"], watch.cpu["write"] = alone_wall, alone_cpu
    return {
        "wall": watch.wall,
        "cpu": watch.cpu,
        "records": records,
        "instants": len(frames),
        "writer_alone_rate": records / alone_wall,
    }


def print_breakdown(result: dict, sink_rates: dict, role_usage: dict, per_instant: int):
    """The stage table, the sink's roles' CPU, the ratios the issue asks for, and the largest items, named."""
    records, wall, cpu = result["records"], result["wall"], result["cpu"]
    print(
        f"(j) where the time goes: {records:,} records in {result['instants']} instants of {per_instant:,}, each stage "
        "in turn in one process"
    )
    print(f"    {'stage':<82} {'wall s':>7} {'CPU s':>7} {'µs/record':>10} {'records/s alone':>16}")
    for stage, label in STAGES.items():
        print(
            f"    {label:<82} {wall[stage]:>7.2f} {cpu[stage]:>7.2f} {1e6 * wall[stage] / records:>10.1f} "
            f"{records / max(wall[stage], 1e-9):>16,.0f}"
        )
    series = sum(wall.values())
    print(
        f"    {'all stages in series':<82} {series:>7.2f} {sum(cpu.values()):>7.2f} {1e6 * series / records:>10.1f} "
        f"{records / series:>16,.0f}"
    )
    alone, cores = result["writer_alone_rate"], os.cpu_count() or 1
    for participants, rate in sorted(sink_rates.items()):
        usage = role_usage.get(participants, {})
        sink_s = records / rate
        print(
            f"(j) the sink, {participants} participant(s): {rate:,.0f} committed records/s = {rate / alone:.2f}x "
            f"Hudi's writer alone ({alone:,.0f} rows/s); per record {1e6 / rate:.1f} µs against the stages' "
            f"{1e6 * series / records:.1f} µs in series"
            + (
                "; CPU over its drain: "
                + ", ".join(
                    f"{name} {u['cpu_s']:,.1f} s" + (f" (JVM {u['jvm_s']:,.1f})" if "jvm_s" in u else "")
                    for name, u in sorted(usage.items())
                )
                if usage
                else ""
            )
            + f" ({cores} cores for {sink_s:,.0f} s offer {cores * sink_s:,.0f} CPU-s)"
        )
    if 1 in sink_rates and 2 in sink_rates:
        print(
            f"(j) two participants / one: {sink_rates[2] / sink_rates[1]:.2f}x (target at least 1.00x); one "
            f"participant / writer alone: {sink_rates[1] / alone:.2f}x (target at least 0.75x)"
        )
    # the most a machine of `cores` can commit while every stage costs the CPU it did in series: every core busy,
    # nothing waiting. A sink near it is bound by its stages' CPU, not by waits; past it only less CPU per record goes
    # faster
    bound = records * cores / sum(cpu.values())
    beside = sum(cpu.values()) - cpu["write"]
    budget = records * cores / (0.75 * alone) - cpu["write"]
    print(
        f"(j) the stages' CPU bound on {cores} cores: {bound:,.0f} records/s = {bound / alone:.2f}x Hudi's writer alone"
        + (f"; the sink with 1 participant reaches {sink_rates[1] / bound:.2f} of it" if 1 in sink_rates else "")
        + f". At 0.75x the writer alone the stages beside Hudi's write may cost {budget:,.1f} CPU-s; they cost "
        f"{beside:,.1f}"
    )
    others = {label: wall[stage] for stage, label in STAGES.items() if stage != "write"}
    if 1 in sink_rates:
        others["the sink's waits and overlap (its drain's wall time less the stages in series)"] = (
            records / sink_rates[1] - series
        )
    largest = sorted(others.items(), key=lambda item: -item[1])[:3]
    print(
        "(j) largest items beside Hudi's write: " + "; ".join(f"{label} {seconds:.1f} s" for label, seconds in largest)
    )


def plot_breakdown(result: dict, sink_rates: dict, path: Path):
    """Microseconds per record: each stage in series, stacked, beside the sink with 1 and 2 participants and Hudi's
    writer alone."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records, wall = result["records"], result["wall"]
    figure, axes = plt.subplots(figsize=(11, 3.4))
    left, colours = 0.0, dict(zip(STAGES, plt.get_cmap("tab10").colors))
    for stage, label in STAGES.items():
        width = 1e6 * wall[stage] / records
        axes.barh("stages in series", width, left=left, label=label.split(" (")[0], color=colours[stage])
        left += width
    for participants, rate in sorted(sink_rates.items()):
        axes.barh(f"the sink, {participants} participant(s)", 1e6 / rate, color="grey")
    axes.barh("Hudi's writer alone", 1e6 / result["writer_alone_rate"], color=colours["write"])
    axes.set_xlabel("µs per record (lower is faster)")
    axes.invert_yaxis()
    axes.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    axes.set_title("where a record's time goes (one run, same rows)")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
