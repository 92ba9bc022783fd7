"""Build small tables through the real timeline and writer code, without a broker (for reader and layout tests)."""
import random
from hudi_kafka_nb.config import load_config
from hudi_kafka_nb.demo import sample_orders
from hudi_kafka_nb.messages import PartitionProgress
from hudi_kafka_nb.records import RawRecord, decode_records
from hudi_kafka_nb.table import avro_schema, data_schema, open_table
from hudi_kafka_nb.timeline import (Checkpoint, commit_metadata, complete_commit, latest_instant_time,
                                    next_instant_time, start_commit)
from hudi_kafka_nb.writer import make_writer


def build_table(path, engine, commits=3, per_commit=3_000, partition_field="region", writer=None, leave_last_pending=False):
    """A table of `commits` commits of order events from one topic, 2 partitions; returns (config, instants).

    With `leave_last_pending`, the last instant writes its files but is never completed."""
    config = load_config(bootstrap_servers="127.0.0.1:1", topics=["orders"], table_path=str(path), table_name="orders",
                         partition_field=partition_field, writer_engine=engine)
    table, writer = open_table(config), writer or make_writer(config)
    schema, offsets, instants, rng = avro_schema(data_schema(config), "orders"), {0: 0, 1: 0}, [], random.Random(3)
    for n in range(commits):
        instant = next_instant_time(latest_instant_time(table))
        start_commit(table, instant)
        records, progress = [], []
        for partition in (0, 1):
            events = sample_orders(n * per_commit, per_commit // 2, rng)
            start = offsets[partition]
            records += [RawRecord("orders", partition, start + i, 1_795_000_000_000 + i, k, v) for i, (k, v) in enumerate(events)]
            offsets[partition] += len(events)
            progress.append(PartitionProgress("orders", partition, start, offsets[partition], len(events)))
        rows, _ = decode_records(records, config)
        stats = writer.write(rows.to_batches(), instant)
        instants.append(instant)
        if leave_last_pending and n == commits - 1: break
        checkpoint = Checkpoint(epoch=1, coordinator_id="test", partitions=progress)
        complete_commit(table, instant, commit_metadata(stats, schema, checkpoint))
    return config, instants
