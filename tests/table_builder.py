"""Build small tables with the sink's own Hudi ports in one process, without a broker (for reader tests)."""

import random

from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.core.kafka_records import RawRecord
from hudi_kafka_nb.core.messages import Checkpoint, PartitionProgress
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.dev.producers import sample_orders
from hudi_kafka_nb.formats.records import decode_records
from hudi_kafka_nb.table.committer import HudiCommitter
from hudi_kafka_nb.table.fenced_table import FencedTable
from hudi_kafka_nb.table.hudi import HudiJava
from hudi_kafka_nb.table.writer import HudiWriter


def build_table(spark, path, commits=3, per_commit=3_000, partition_field="region", leave_last_pending=False):
    """A table of `commits` commits of order events from one topic, 2 partitions; returns (config, table, instants).

    With `leave_last_pending`, the last instant is written but never committed."""
    config = load_config(
        bootstrap_servers="127.0.0.1:1",
        topics=["orders"],
        table_path=str(path),
        table_name="orders",
        partition_field=partition_field,
        value_schema=DEMO_VALUE_SCHEMA,
    )
    hudi = HudiJava(spark, config)
    table, writer = FencedTable(path, HudiCommitter(hudi)), HudiWriter(hudi)
    table.take_over("builder")
    offsets, instants, rng = {0: 0, 1: 0}, [], random.Random(3)
    for n in range(commits):
        instant = table.start_instant()
        records, progress = [], []
        for partition in (0, 1):
            events = sample_orders(n * per_commit, per_commit // 2, rng)
            start = offsets[partition]
            records += [
                RawRecord("orders", partition, start + i, 1_795_000_000_000 + i, k, v)
                for i, (k, v) in enumerate(events)
            ]
            offsets[partition] += len(events)
            progress.append(PartitionProgress("orders", partition, start, offsets[partition], len(events)))
        rows, _ = decode_records(records, config)
        written = writer.write(rows, instant)
        instants.append(instant)
        if leave_last_pending and n == commits - 1:
            break
        table.commit(
            instant,
            Checkpoint(epoch=table.epoch, coordinator_id="builder", partitions=progress),
            [written.statuses],
            "builder",
        )
    return config, table, instants
