"""How records get from Kafka into Hudi's writer: run on demand (`make benchmark-ingest`), never as a test.

Both paths read the same exact offset ranges of the same topic and end in the same Hudi row-writer call (an inflight
instant, no commit), in one Spark session, in one run: (a) confluent-kafka consumer → decode to Arrow
(records.decode_records) → Spark DataFrame → Hudi   (what participants do) (b) Spark's Kafka source (spark-sql-kafka,
startingOffsets/endingOffsets) → from_json → Hudi Each is repeated and the median and spread printed, with (b) as a
ratio of (a)."""

import argparse
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition
from peer import kafka_jars  # benchmarks/peer.py: Spark's Kafka source and what it needs

from hudi_kafka_nb.config.settings import consumer_settings, load_config
from hudi_kafka_nb.core.kafka_records import RawRecord
from hudi_kafka_nb.dev.broker import EmbeddedBroker, create_topic
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.dev.producers import produce_orders
from hudi_kafka_nb.formats.records import decode_records
from hudi_kafka_nb.table.committer import HudiCommitter
from hudi_kafka_nb.table.hudi import HudiJava
from hudi_kafka_nb.table.spark import spark_session
from hudi_kafka_nb.table.writer import HudiWriter


def via_confluent_kafka(config, writer, ends, instant):
    consumer = Consumer(consumer_settings(config, f"bench-{uuid.uuid4().hex[:6]}"))
    consumer.assign([TopicPartition(t, p, 0) for (t, p) in ends])
    records, total = [], sum(ends.values())
    while len(records) < total:
        records += [
            RawRecord(m.topic(), m.partition(), m.offset(), m.timestamp()[1], m.key(), m.value())
            for m in consumer.consume(config.max_batch_records, timeout=1)
            if m.error() is None
        ]
    consumer.close()
    rows, _ = decode_records(records, config)
    return writer.write(rows, instant).records


def via_spark_kafka_source(spark, config, writer, ends, instant):
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    topic = config.topics[0]

    def offsets(pick):
        return json.dumps({topic: {str(p): pick(e) for (_, p), e in ends.items()}})

    raw = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", config.bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", offsets(lambda e: 0))
        .option("endingOffsets", offsets(lambda e: e))
        .load()
    )
    value_fields = StructType([f for f in writer.hudi.struct.fields if f.name in config.value_schema])
    frame = raw.select(
        F.from_json(F.col("value").cast("string"), value_fields).alias("v"),
        "topic",
        "partition",
        "offset",
        "timestamp",
        "key",
    )
    frame = frame.select(
        "v.*",
        F.col("topic").alias("kafka_topic"),
        F.col("partition").alias("kafka_partition"),
        F.col("offset").alias("kafka_offset"),
        F.col("timestamp").alias("kafka_timestamp"),
        F.col("key").alias("kafka_key"),
    )
    return writer.write_frame(frame.select(*writer.hudi.struct.fieldNames()), instant).records


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hudi-kafka-nb-ingest-"))
    jars = kafka_jars()
    with EmbeddedBroker(root / "broker") as broker:
        topic = f"ingest-{uuid.uuid4().hex[:6]}"
        create_topic(broker.bootstrap_servers, topic, 8)
        ends = produce_orders(broker.bootstrap_servers, topic, args.records, progress=False)
        config = load_config(
            bootstrap_servers=broker.bootstrap_servers,
            topics=[topic],
            table_path=str(root / "table"),
            table_name="ingest",
            partition_field="region",
            value_schema=DEMO_VALUE_SCHEMA,
        )
        spark = spark_session("ingest-paths", extra_jars=jars)
        hudi = HudiJava(spark, config)
        committer, writer = HudiCommitter(hudi), HudiWriter(hudi)
        timings = {"a": [], "b": []}
        for _ in range(args.repeat):
            for name, run in (
                ("a", lambda i: via_confluent_kafka(config, writer, ends, i)),
                ("b", lambda i: via_spark_kafka_source(spark, config, writer, ends, i)),
            ):
                instant = committer.start_instant()
                started = time.perf_counter()
                written = run(instant)
                elapsed = time.perf_counter() - started
                assert written == args.records, (name, written)
                committer.rollback(instant)
                timings[name].append(elapsed)
        spark.stop()
    for name, label in (
        ("a", "confluent-kafka → Arrow → DataFrame → Hudi"),
        ("b", "Spark Kafka source → from_json → Hudi"),
    ):
        runs = timings[name]
        print(
            f"({name}) {label}: median {statistics.median(runs):.2f} s ({args.records / statistics.median(runs):,.0f} "
            f"rec/s), spread {min(runs):.2f}–{max(runs):.2f} s over {len(runs)} runs"
        )
    print(f"(b)/(a) time ratio: {statistics.median(timings['b']) / statistics.median(timings['a']):.2f}")


if __name__ == "__main__":
    main()
