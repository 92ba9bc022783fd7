"""The same failures for our sink and for the peer (Spark Structured Streaming into Hudi): run on demand
(`make benchmark-failures`), never as a test.

On the embedded broker, three runs for each system, each on a fresh topic of 8 partitions:
  kills      records produced at a steady rate while the system is SIGKILLed `--kills` times (the peer's Spark
             application, restarted on its checkpoint; for our sink a random role: coordinator or a participant, as
             `make chaos` does, the broker left alone since the peer has none to lose), then drained; the verdict is
             read from the table by Kafka coordinates: rows, duplicates, missing, unexpected, and the time to drain;
  malformed  a backlog in which every 1,000th value is not JSON: what lands in the table, and where the bad records go;
  truncated  a backlog whose first records were deleted (`delete_records`: the earliest offset is not 0 any more),
             as retention does: what each system reads, and whether it stops.
Every verdict is printed side by side.
"""

import argparse
import json
import random
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pyarrow.compute as pc
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient
from versus_peer import peer_command  # benchmarks/versus_peer.py: how the peer is started

from hudi_kafka_nb.dev.broker import EmbeddedBroker, create_topic
from hudi_kafka_nb.dev.chaos_run import run_chaos
from hudi_kafka_nb.dev.demo import wait_until_committed, wait_until_ingesting
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.dev.producers import produce_orders
from hudi_kafka_nb.dev.roles import RoleProcess
from hudi_kafka_nb.table.reading import coordinates, produced_coordinates, read_snapshot


def by_coordinates(table, expected: set) -> dict:
    "What a table holds against the Kafka coordinates it should hold, as our chaos verdict counts them."
    rows = read_snapshot(table, ["kafka_topic", "kafka_partition", "kafka_offset"])
    held = coordinates(table)
    return {
        "expected": len(expected),
        "rows": rows.num_rows,
        "duplicates": rows.num_rows - len(held),
        "missing": len(expected - held),
        "unexpected": len(held - expected),
    }


def peer_drain(broker, topic, workdir) -> tuple[float, int]:
    """Run the peer on its checkpoint in `workdir` until it has taken every record available, as a restart after the
    last failure does; (seconds, exit code)."""
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with open(workdir / "peer.log", "ab") as log:
        code = subprocess.run(peer_command(broker, topic, workdir), stdout=log, stderr=log).returncode
    return time.perf_counter() - started, code


def peer_kills(broker, args, root) -> dict:
    "SIGKILL the peer `--kills` times while producing, restarting it on its checkpoint; then drain and verify."
    rng, topic, workdir = random.Random(args.seed), f"peer-kills-{uuid.uuid4().hex[:6]}", root / "peer-kills"
    workdir.mkdir(parents=True)
    create_topic(broker.bootstrap_servers, topic, 8)
    produced, producing = {}, True

    def produce():
        while producing:
            produced.update(
                produce_orders(broker.bootstrap_servers, topic, args.rate, rate_per_s=args.rate, progress=False)
            )

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    with open(workdir / "peer.log", "ab") as log:
        for kill in range(args.kills):
            # micro-batches back to back until killed
            process = subprocess.Popen(
                peer_command(broker, topic, workdir, until_records=10**12), stdout=subprocess.PIPE, stderr=log
            )
            process.stdout.readline()  # "query started": its Spark is up, micro-batches run
            time.sleep(rng.uniform(*args.kill_every_s))
            process.kill()
            process.wait()
            print(f"  peer killed {kill + 1} of {args.kills}", flush=True)
            time.sleep(rng.uniform(*args.restart_after_s))
        producing = False
        producer.join()
    seconds, code = peer_drain(broker, topic, workdir)
    return {
        "drain_s": round(seconds, 1),
        "exit": code,
        **by_coordinates(workdir / "table", produced_coordinates(produced)),
        "kills": {"peer_killed": args.kills},
    }


def sink_kills(broker, args, root) -> dict:
    "Our chaos at the same rate and kill count, roles only (coordinator, participants), the broker left alone."
    report = run_chaos(
        root / "sink-kills",
        kills=args.kills,
        participants=2,
        broker=broker,
        seed=args.seed,
        produce_per_second=args.rate,
        kill_every_s=args.kill_every_s,
        restart_after_s=args.restart_after_s,
        broker_kills=False,
    )
    return {
        "drain_s": report["drain_s"],
        "expected": report["produced"],
        "rows": report["in_table"],
        "duplicates": report["duplicates"],
        "missing": report["missing"],
        "unexpected": report["unexpected"],
        "kills": report["kills"],
        "every_invariant": report["ok"],
    }


def sink_drain(broker, topic, ends, workdir) -> dict:
    "Our sink (coordinator and one participant) on a backlog, until it has committed to `ends` or stopped trying."
    params = {
        "bootstrap_servers": broker.bootstrap_servers,
        "topics": topic,
        "table_path": str(workdir / "table"),
        "table_name": "bench",
        "partition_field": "region",
        "commit_interval_s": 2.0,
        "value_schema": DEMO_VALUE_SCHEMA,
        "control_topic": f"control-{uuid.uuid4().hex[:6]}",
        "dead_letter_topic": f"{topic}-dead-letters",
    }
    roles = [
        RoleProcess("coordinator", params, workdir),
        RoleProcess("participant", params, workdir, name="participant-0"),
    ]
    started = time.perf_counter()
    try:
        for r in roles:
            r.start()
        wait_until_ingesting(params["table_path"], roles, timeout_s=300)
        wait_until_committed(params["table_path"], ends, roles, timeout_s=600)
        outcome = "committed to the end of every partition"
    except Exception as e:
        outcome = f"did not finish: {e}"
    finally:
        for r in roles:
            r.stop()
    return {
        "outcome": outcome,
        "seconds": round(time.perf_counter() - started, 1),
        "table": workdir / "table",
        "dead_letter_topic": params["dead_letter_topic"],
    }


def dead_letters(broker, topic) -> int:
    "Records in a dead-letter topic (0 if it does not exist)."
    from confluent_kafka import Consumer

    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap_servers, "group.id": uuid.uuid4().hex, "enable.auto.commit": False}
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if meta is None or meta.error is not None:
            return 0
        return sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in meta.partitions)
    finally:
        consumer.close()


def null_rows(table) -> int:
    "Rows whose every value field is null: what Spark's from_json makes of a value that is not JSON."
    rows = read_snapshot(table, list(DEMO_VALUE_SCHEMA))
    nulls = [pc.is_null(rows[c]) for c in DEMO_VALUE_SCHEMA]
    mask = nulls[0]
    for n in nulls[1:]:
        mask = pc.and_(mask, n)
    return pc.sum(mask).as_py() or 0


def malformed(broker, args, root) -> dict:
    "A backlog with every 1,000th value not JSON, through both systems."
    topic = f"malformed-{uuid.uuid4().hex[:6]}"
    create_topic(broker.bootstrap_servers, topic, 8)
    ends = produce_orders(broker.bootstrap_servers, topic, args.backlog, bad_every=1_000, progress=False)
    bad = args.backlog // 1_000
    expected = produced_coordinates(ends)
    ours = sink_drain(broker, topic, ends, root / "sink-malformed")
    peer_dir = root / "peer-malformed"
    _, code = peer_drain(broker, topic, peer_dir)
    return {
        "bad_values": bad,
        "sink": {
            "outcome": ours["outcome"],
            **by_coordinates(ours["table"], expected),
            "rows_all_null": null_rows(ours["table"]),
            "dead_lettered": dead_letters(broker, ours["dead_letter_topic"]),
        },
        "peer": {
            "exit": code,
            **by_coordinates(peer_dir / "table", expected),
            "rows_all_null": null_rows(peer_dir / "table"),
        },
    }


def truncated(broker, args, root) -> dict:
    "A backlog whose first `--deleted` records of every partition were deleted, through both systems."
    topic = f"truncated-{uuid.uuid4().hex[:6]}"
    create_topic(broker.bootstrap_servers, topic, 8)
    ends = produce_orders(broker.bootstrap_servers, topic, args.backlog, progress=False)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    cut = {(t, p): min(args.deleted, end) for (t, p), end in ends.items()}
    for future in admin.delete_records([TopicPartition(t, p, o) for (t, p), o in cut.items()]).values():
        future.result(30)
    expected = produced_coordinates(ends, starts=cut)
    ours = sink_drain(broker, topic, ends, root / "sink-truncated")
    peer_dir = root / "peer-truncated"
    _, code = peer_drain(broker, topic, peer_dir)
    return {
        "earliest_offset": args.deleted,
        "sink": {"outcome": ours["outcome"], **by_coordinates(ours["table"], expected)},
        "peer": {"exit": code, **by_coordinates(peer_dir / "table", expected)},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--rate", type=int, default=2_000, help="records produced per second while killing")
    parser.add_argument("--kill-every-s", type=float, nargs=2, default=(2.0, 5.0))
    parser.add_argument("--restart-after-s", type=float, nargs=2, default=(0.5, 3.0))
    parser.add_argument("--backlog", type=int, default=50_000, help="records of the malformed and truncated runs")
    parser.add_argument(
        "--deleted", type=int, default=500, help="records deleted from the head of every partition (truncated run)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--parts", default="kmt", help="k (kills), m (malformed), t (truncated)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hudi-kafka-nb-failures-"))
    results = {}
    with EmbeddedBroker(root / "broker") as broker:
        if "k" in args.parts:
            print(f"kills: {args.kills} SIGKILLs each, {args.rate:,} records/s produced meanwhile …", flush=True)
            results["kills"] = {"sink": sink_kills(broker, args, root), "peer": peer_kills(broker, args, root)}
        if "m" in args.parts:
            results["malformed"] = malformed(broker, args, root)
        if "t" in args.parts:
            results["truncated"] = truncated(broker, args, root)
    for run, systems in results.items():
        print(f"\n{run}:")
        for name, verdict in systems.items():
            print(
                f"  {name:>5}: {json.dumps(verdict, default=str)}"
                if isinstance(verdict, dict)
                else f"  {name}: {verdict}"
            )
    print(f"\nwork folder (logs, tables): {root}")


if __name__ == "__main__":
    main()
