"""Write the class-data-sharing archive that makes every local Spark of the sink start faster.

A local Spark loads some 18,000 classes (Spark's and the Hudi bundle's) and verifies each one before the first write;
on two cores, with a coordinator and two participants starting at once, that is most of a role's start. Java 17 can
keep those classes, parsed and verified, in an archive (CDS, JEP 350) that the next JVMs map from disk: here it took a
Spark from about 18 to 13 CPU-seconds for its start and first two commits. `spark.spark_session` uses the
archive when it exists and matches this JDK and classpath, and quietly starts without it otherwise.

The archive is written when a JVM that loaded the classes exits, so this script runs the classes the roles use: a
bulk insert by a participant's writer, an upsert into merge-on-read by the coordinator's client, a compaction, and
reads by Spark's Hudi datasource, on throw-away tables.
Usage: python tools/spark_cds.py OUTPUT   (make setup runs it after resolving the Hudi bundle)
"""

import os
import random
import sys
import tempfile
from pathlib import Path


def exercise(spark, folder: Path):
    "Load what the roles load: write, commit, compact and read two small tables with the sink's own ports."
    from hudi_kafka_nb.config.settings import load_config
    from hudi_kafka_nb.core.kafka_records import RawRecord
    from hudi_kafka_nb.core.messages import Checkpoint, PartitionProgress
    from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
    from hudi_kafka_nb.dev.producers import UPSERT_SETTINGS, sample_orders
    from hudi_kafka_nb.formats.records import decode_records
    from hudi_kafka_nb.table.committer import HudiCommitter
    from hudi_kafka_nb.table.fenced_table import FencedTable
    from hudi_kafka_nb.table.hudi import HudiJava
    from hudi_kafka_nb.table.writer import HudiWriter

    rng = random.Random(1)
    for name, settings in (
        ("appended", {}),
        ("keyed", {**UPSERT_SETTINGS, "hudi_options": {"hoodie.compact.inline.max.delta.commits": "2"}}),
    ):
        config = load_config(
            bootstrap_servers="127.0.0.1:1",
            topics=["orders"],
            table_path=str(folder / name),
            table_name=name,
            partition_field="region",
            value_schema=DEMO_VALUE_SCHEMA,
            **settings,
        )
        hudi = HudiJava(spark, config)
        table, writer, offset = FencedTable(config.table_path, HudiCommitter(hudi)), HudiWriter(hudi), 0
        table.take_over("cds")
        for _ in range(3):
            events = sample_orders(offset, 500, rng, orders=200 if settings else 0)
            rows, _ = decode_records(
                [RawRecord("orders", 0, offset + i, 0, k, v) for i, (k, v) in enumerate(events)], config
            )
            instant = table.start_instant()
            written = writer.write(rows, instant)
            progress = [PartitionProgress("orders", 0, offset, offset + len(events), len(events))]
            table.commit(
                instant,
                Checkpoint(epoch=table.epoch, coordinator_id="cds", partitions=progress),
                [written.statuses] if written.statuses else [],
                "cds",
                staged_files=written.staged,
            )
            offset += len(events)
        spark.read.format("hudi").load(config.table_path).count()
        table.close()


def main(output: str):
    output = Path(output).resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    output.unlink(missing_ok=True)  # a JVM using an archive cannot write another on top of it
    partial = output.with_name(output.name + ".partial")
    os.environ["HUDI_KAFKA_NB_SPARK_JAVA_OPTIONS"] = (
        f"-XX:ArchiveClassesAtExit={partial} -Xlog:cds=off -Xlog:cds+dynamic=off"
    )
    from pyspark import SparkContext

    from hudi_kafka_nb.table.spark import spark_session

    spark = spark_session("class-data-sharing archive")
    jvm = SparkContext._gateway.proc  # the JVM writes the archive as it exits: wait for that
    with tempfile.TemporaryDirectory() as folder:
        exercise(spark, Path(folder))
    spark.stop()
    jvm.stdin.close()  # Spark's gateway exits when its standard input closes
    if jvm.wait(300) != 0 or not partial.exists():
        sys.exit(f"the JVM exited with {jvm.returncode} and wrote no archive at {partial}")
    partial.replace(output)


if __name__ == "__main__":
    main(sys.argv[1])
