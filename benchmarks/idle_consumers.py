"""What idle data consumers cost: run on demand (`python benchmarks/idle_consumers.py`), never as a test.

A participant reads each of its tables through a consumer of the table's own, so the broker answers every table's long
polls while nothing is produced. One embedded broker, one single-partition topic a table, nothing produced: the CPU the
broker and the clients spend over a minute, and the clients' threads, with a consumer per table in each of two
participants, then with one consumer a participant assigned every table's partition (the way a participant's tables
could share one). Consumers take the participants' settings (`consumer_settings`).
"""

from __future__ import annotations

import argparse
import time

import psutil
from confluent_kafka import Consumer, TopicPartition

from hudi_kafka_nb.config.settings import consumer_settings, load_config
from hudi_kafka_nb.dev.broker import EmbeddedBroker, create_topic

PARTICIPANTS = 2


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def idle_cost(consumers: list[Consumer], settle_s: float, measure_s: float) -> str:
    "The broker's and this process's cores over `measure_s` with these consumers idle, and this process's threads."
    jvm = next(p for p in psutil.Process().children(recursive=True) if p.name() == "java")
    clients = psutil.Process()
    time.sleep(settle_s)  # every consumer has connected and fetches
    before = cpu_seconds(jvm), cpu_seconds(clients), time.monotonic()
    time.sleep(measure_s)
    after = cpu_seconds(jvm), cpu_seconds(clients), time.monotonic()
    wall = after[2] - before[2]
    return (
        f"{len(consumers)} consumers: broker {(after[0] - before[0]) / wall:.2f} cores, clients "
        f"{(after[1] - before[1]) / wall:.2f} cores, {clients.num_threads()} threads"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    broker = EmbeddedBroker().start()
    try:
        config = load_config(
            bootstrap_servers=broker.bootstrap_servers,
            topics=["table-0"],
            table_path="/tmp/unused",
            table_name="t",
            value_schema={"id": "string"},
        )
        settings = consumer_settings(config, "idle-consumers")  # the participants' own
        partitions = [TopicPartition(f"table-{i}", 0, 0) for i in range(args.tables)]
        for partition in partitions:
            create_topic(broker.bootstrap_servers, partition.topic, 1)
        ways = {
            "a consumer per table in each participant": [[p] for _ in range(PARTICIPANTS) for p in partitions],
            "one consumer per participant": [partitions for _ in range(PARTICIPANTS)],
        }
        for way, assignments in ways.items():
            consumers = [Consumer(settings) for _ in assignments]
            for consumer, assigned in zip(consumers, assignments):
                consumer.assign(assigned)
            print(f"{args.tables} idle tables, {way}: {idle_cost(consumers, 15, args.seconds)}", flush=True)
            for consumer in consumers:
                consumer.close()
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
