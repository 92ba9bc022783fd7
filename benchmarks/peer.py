"""The peer a user would pick instead of this sink: Spark Structured Streaming from Spark's Kafka source into Hudi's
streaming sink (offsets in Spark's checkpoint, one Hudi commit per micro-batch), on the same jars, the same table
settings (Hudi's metadata table included) and the same local cores as the sink's roles. Run on demand by
`make benchmark` (part f) in a process of its own, so that its memory is measured like a role's; it drains the topic's
backlog (`trigger(availableNow=True)`, `maxOffsetsPerTrigger` records per micro-batch, 0 for one micro-batch), or
runs continuously until a number of records is committed (`--until-records`, for the latency at a steady rate), and
prints one JSON line: seconds from the query's start to its end, and micro-batches run."""

import argparse
import json
import time
from pathlib import Path

from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.table.hudi import HudiJava
from hudi_kafka_nb.table.hudi_options import table_options
from hudi_kafka_nb.table.spark import spark_session

SPARK_KAFKA = ("spark-sql-kafka", "spark-token-provider-kafka", "kafka-clients", "commons-pool2")


def kafka_jars() -> list[str]:
    """Spark's Kafka source and what it needs, as `make .jars/spark-kafka/.resolved` copies them from
    maven/spark-kafka/pom.xml."""
    folder = Path(__file__).resolve().parents[1] / ".jars" / "spark-kafka"
    jars = [str(j) for j in sorted(folder.glob("*.jar")) if j.name.startswith(SPARK_KAFKA)]
    if not jars:
        raise SystemExit(f"no Spark Kafka jars in {folder}: run `make .jars/spark-kafka/.resolved`")
    return jars


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--table-path", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument(
        "--max-offsets-per-trigger", type=int, default=0, help="records per micro-batch; 0: the whole backlog in one"
    )
    parser.add_argument(
        "--until-records",
        type=int,
        default=0,
        help="run continuously (a micro-batch as soon as the last one ends) until this many records are committed",
    )
    parser.add_argument("--hudi-options", default="{}", help="more hoodie.* settings, as JSON")
    args = parser.parse_args()
    config = load_config(
        bootstrap_servers=args.bootstrap_servers,
        topics=[args.topic],
        table_path=args.table_path,
        table_name="peer",
        partition_field="region",
        value_schema=DEMO_VALUE_SCHEMA,
    )
    spark = spark_session("structured-streaming-peer", extra_jars=kafka_jars())
    hudi = HudiJava(spark, config)  # the same Spark schema and Avro schema as the sink's rows
    source = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", args.bootstrap_servers)
        .option("subscribe", args.topic)
        .option("startingOffsets", "earliest")
        .option("failOnDataLoss", "true")
    )
    if args.max_offsets_per_trigger:
        source = source.option("maxOffsetsPerTrigger", args.max_offsets_per_trigger)
    value_fields = StructType([f for f in hudi.struct.fields if f.name in config.value_schema])
    rows = (
        source.load()
        .select(
            F.from_json(F.col("value").cast("string"), value_fields).alias("v"),
            "topic",
            "partition",
            "offset",
            "timestamp",
            "key",
        )
        .select(
            "v.*",
            F.col("topic").alias("kafka_topic"),
            F.col("partition").alias("kafka_partition"),
            F.col("offset").alias("kafka_offset"),
            F.col("timestamp").alias("kafka_timestamp"),
            F.col("key").alias("kafka_key"),
        )
        .select(*hudi.struct.fieldNames())
    )
    # the sink's table settings (keys = Kafka coordinates, partitioned by region, metadata table on), written by bulk
    # insert
    options = {
        **table_options(config, hudi.avro_schema),
        "hoodie.datasource.write.operation": "bulk_insert",
        "hoodie.datasource.write.streaming.disable.compaction": "true",
        **json.loads(args.hudi_options),
    }
    writer = (
        rows.writeStream.format("hudi")
        .options(**options)
        .option("checkpointLocation", args.checkpoint)
        .outputMode("append")
    )
    started, committed = time.perf_counter(), {}
    if args.until_records:
        query = writer.trigger(processingTime="0 seconds").start(args.table_path)
        print("query started", flush=True)  # the benchmark starts producing now
        while sum(committed.values()) < args.until_records:
            time.sleep(0.5)
            for progress in query.recentProgress:
                committed[progress["batchId"]] = progress.get("numInputRows", 0)
        query.stop()
    else:
        query = writer.trigger(availableNow=True).start(args.table_path)
        query.awaitTermination()
        committed = {p["batchId"]: p.get("numInputRows", 0) for p in query.recentProgress}
    seconds = time.perf_counter() - started
    batches = sum(1 for n in committed.values() if n)
    spark.stop()
    print(json.dumps({"seconds": seconds, "batches": batches}))


if __name__ == "__main__":
    main()
