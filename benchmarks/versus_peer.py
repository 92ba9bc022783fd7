"""Our sink against the peer a user would pick instead: run on demand (`make benchmark-peer`), never as a test.

Each of `--repeats` rounds, on the embedded broker, drains one backlog of order events with
  raw        a bare confluent-kafka consumer with the sink's fetch settings (the ceiling),
  sink-1/2   our sink with 1 and 2 participants (`max_buffered_records` records each per commit),
  peer-N     Spark Structured Streaming into Hudi (benchmarks/peer.py) at sink-1's and sink-2's records per commit,
  peer-one   the peer in one micro-batch,
then feeds a fresh topic at a steady rate, half sink-2's drain rate, for `--steady-s` seconds, through our sink
(2 participants) and through the peer (micro-batches back to back), and measures each record's produce → commit
latency from the table (its commit's completion time less its Kafka timestamp). Every table is checked: rows =
records produced, no Kafka coordinate twice. Printed per run: the median and spread over the rounds of committed
records/s and MB/s, the ratio to raw and to the peer at the same commit size, the latency median and p95, and per
process its peak memory (shared pages counted once) and CPU seconds; written to a CSV and a PNG in the work folder.
"""

import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import Consumer, TopicPartition

from hudi_kafka_nb.config.settings import consumer_settings, load_config
from hudi_kafka_nb.dev.broker import EmbeddedBroker, create_topic
from hudi_kafka_nb.dev.demo import wait_until_committed, wait_until_ingesting
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.dev.producers import produce_orders
from hudi_kafka_nb.dev.roles import RoleProcess, participant_roles, tree_memory
from hudi_kafka_nb.table.reading import coordinate_check, read_snapshot
from hudi_kafka_nb.table.timeline import completion_times

# the same table maintenance for both systems; the timeline kept long enough to date every commit of a run
HUDI_OPTIONS = {"hoodie.keep.min.commits": "200", "hoodie.keep.max.commits": "210"}


def raw_read(bootstrap, topic, ends):
    "Seconds a bare consumer with the sink's fetch settings takes to read the backlog, and the bytes of its values."
    config = load_config(
        bootstrap_servers=bootstrap,
        topics=[topic],
        table_path="/unused",
        table_name="x",
        value_schema=DEMO_VALUE_SCHEMA,
    )
    consumer = Consumer(consumer_settings(config, f"raw-{uuid.uuid4().hex[:6]}"))
    consumer.assign([TopicPartition(t, p, 0) for (t, p) in ends])
    total, seen, size, started = sum(ends.values()), 0, 0, time.perf_counter()
    while seen < total:
        for m in consumer.consume(config.max_batch_records, timeout=1):
            if m.error() is None:
                seen += 1
                size += len(m.value() or b"")
    seconds = time.perf_counter() - started
    consumer.close()
    return seconds, size


class Usage:
    """Peak memory (proportional set size: shared pages once) and CPU seconds of named process trees, sampled every 0.2
    s until `stop`."""

    def __init__(self, roots):
        self.roots, self.peak, self.cpu, self._stop = roots, {}, {}, threading.Event()
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self):
        import psutil

        cpu = {}
        while not self._stop.is_set():
            for name, pid in self.roots().items():
                try:
                    tree = [psutil.Process(pid)] + psutil.Process(pid).children(recursive=True)
                except psutil.NoSuchProcess:
                    continue
                for proc in tree:
                    try:
                        t = proc.cpu_times()
                        cpu[(name, proc.pid)] = t.user + t.system
                    except psutil.NoSuchProcess:
                        pass
                self.peak[name] = max(self.peak.get(name, 0), tree_memory(tree))
                self.cpu[name] = sum(v for (n, _), v in cpu.items() if n == name)
            time.sleep(0.2)

    def stop(self) -> dict:
        self._stop.set()
        time.sleep(0.3)
        return {
            name: {"peak_mib": round(self.peak[name] / 2**20), "cpu_s": round(self.cpu.get(name, 0), 1)}
            for name in self.peak
        }


def checked(table, produced):
    check = coordinate_check(table)
    assert check["rows"] == produced and check["duplicates"] == 0, f"{table}: {check}"


def latencies(table):
    "Each record's produce → commit seconds: its commit's completion time less its Kafka timestamp; (median, p95)."
    done = {i: datetime.strptime(c, "%Y%m%d%H%M%S%f").timestamp() for i, c in completion_times(table).items()}
    rows = read_snapshot(table, ["_hoodie_commit_time", "kafka_timestamp"])
    # Kafka's create time
    produced = pc.cast(pc.cast(rows["kafka_timestamp"], pa.timestamp("ms")), pa.int64()).to_numpy() / 1000
    committed = [done[i] for i in rows["_hoodie_commit_time"].to_pylist()]
    spans = sorted(c - p for c, p in zip(committed, produced))
    return statistics.median(spans), spans[int(0.95 * (len(spans) - 1))]


def run_sink(broker, topic, ends, participants, workdir, args, steady_rate=0, max_buffered=0):
    """Our sink on `topic`: seconds to drain `ends` (or, with `steady_rate`, to take a steady stream), and each
    process's usage; `max_buffered`: records a participant takes into an instant (0: `args.max_buffered`)."""
    params = {
        "bootstrap_servers": broker.bootstrap_servers,
        "topics": topic,
        "table_path": str(workdir / "table"),
        "table_name": "bench",
        "partition_field": "region",
        "commit_interval_s": args.commit_interval,
        "write_timeout_s": 300.0,
        "value_schema": DEMO_VALUE_SCHEMA,
        "min_participants": participants,
        "max_buffered_records": max_buffered or args.max_buffered,
        "control_topic": f"control-{uuid.uuid4().hex[:6]}",
        "hudi_options": HUDI_OPTIONS,
    }
    roles = [RoleProcess("coordinator", params, workdir), *participant_roles(params, participants, workdir)]
    usage = Usage(lambda: {r.name: r.process.pid for r in roles if r.process})
    try:
        for r in roles:
            r.start()
        wait_until_ingesting(params["table_path"], roles, timeout_s=300)
        started = time.perf_counter()
        if steady_rate:
            ends = produce_orders(
                broker.bootstrap_servers,
                topic,
                int(steady_rate * args.steady_s),
                rate_per_s=steady_rate,
                progress=False,
            )
        wait_until_committed(params["table_path"], ends, roles, timeout_s=1800)
        seconds = time.perf_counter() - started
    finally:
        for r in roles:
            r.stop()
    checked(params["table_path"], sum(ends.values()))
    return seconds, usage.stop(), params["table_path"]


def peer_command(broker, topic, workdir, per_batch=0, until_records=0, hudi_options=None) -> list[str]:
    """benchmarks/peer.py on `topic`, its table and checkpoint in `workdir`: `per_batch` records per micro-batch (0: the
    backlog in one); with `until_records`, micro-batches back to back until that many are committed, else the backlog,
    then exit."""
    return [
        sys.executable,
        str(Path(__file__).with_name("peer.py")),
        "--bootstrap-servers",
        broker.bootstrap_servers,
        "--topic",
        topic,
        "--table-path",
        str(workdir / "table"),
        "--checkpoint",
        str(workdir / "checkpoint"),
        "--max-offsets-per-trigger",
        str(per_batch),
        "--hudi-options",
        json.dumps(hudi_options or {}),
    ] + (["--until-records", str(until_records)] if until_records else [])


def run_peer(broker, topic, ends, per_batch, workdir, args, steady_rate=0, hudi_options=None, check=None):
    """The peer on `topic`, in a process of its own: seconds (from its query's start), its usage, its table.
    `hudi_options` (beside the timeline's): its keyed mode, say; `check(table)` instead of every record in it once."""
    workdir.mkdir(parents=True)
    total = int(steady_rate * args.steady_s) if steady_rate else sum(ends.values())
    command = peer_command(
        broker, topic, workdir, per_batch, total if steady_rate else 0, {**HUDI_OPTIONS, **(hudi_options or {})}
    )
    with open(workdir / "peer.log", "w") as log:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
        usage = Usage(lambda: {"peer": process.pid})
        if steady_rate:
            assert process.stdout.readline().strip() == "query started", (
                f"the peer did not start: see {workdir / 'peer.log'}"
            )
            produce_orders(broker.bootstrap_servers, topic, total, rate_per_s=steady_rate, progress=False)
        out, _ = process.communicate()
    if process.returncode:
        raise SystemExit(f"the peer failed (exit {process.returncode}): see {workdir / 'peer.log'}")
    (check or (lambda table: checked(table, total)))(workdir / "table")
    return json.loads(out.strip().splitlines()[-1])["seconds"], usage.stop(), workdir / "table"


def one_round(broker, args, root, n):
    "The runs of one round, as rows."
    topic = f"backlog-{n}-{uuid.uuid4().hex[:6]}"
    create_topic(broker.bootstrap_servers, topic, 8)
    ends = produce_orders(broker.bootstrap_servers, topic, args.records, progress=False)
    records = sum(ends.values())
    seconds, size = raw_read(broker.bootstrap_servers, topic, ends)
    rows = [{"run": "raw", "seconds": seconds, "usage": {}}]
    for participants in (1, 2):
        seconds, usage, _ = run_sink(broker, topic, ends, participants, root / f"{n}-sink-{participants}", args)
        rows.append({"run": f"sink-{participants}", "seconds": seconds, "usage": usage})
    # the peer at each of our runs' records per commit (1 and 2 participants), and in one micro-batch
    for per_batch, name in [(k * args.max_buffered, f"peer-{k * args.max_buffered}") for k in (1, 2)] + [
        (0, "peer-one")
    ]:
        seconds, usage, _ = run_peer(broker, topic, ends, per_batch, root / f"{n}-{name}", args)
        rows.append({"run": name, "seconds": seconds, "usage": usage})
    for row in rows:
        row.update(
            round=n, records=records, records_per_s=records / row["seconds"], mb_per_s=size / 2**20 / row["seconds"]
        )
    steady = next(r["records_per_s"] for r in rows if r["run"] == "sink-2") / 2
    for name, run in (
        ("sink-2 steady", lambda t, w: run_sink(broker, t, {}, 2, w, args, steady)),
        ("peer steady", lambda t, w: run_peer(broker, t, {}, 0, w, args, steady)),
    ):
        topic = f"steady-{n}-{uuid.uuid4().hex[:6]}"
        create_topic(broker.bootstrap_servers, topic, 8)
        seconds, usage, table = run(topic, root / f"{n}-{name.replace(' ', '-')}")
        median, p95 = latencies(table)
        rows.append(
            {
                "run": name,
                "round": n,
                "records": int(steady * args.steady_s),
                "seconds": seconds,
                "usage": usage,
                "rate_per_s": round(steady),
                "latency_median_s": median,
                "latency_p95_s": p95,
            }
        )
    return rows


def summary(rows, args, root):
    "Print the medians and spreads, write the CSV and the PNG."
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = list(dict.fromkeys(r["run"] for r in rows))

    def med(run, key):
        return statistics.median(r[key] for r in rows if r["run"] == run)

    def spread(run, key):
        return (
            min(r[key] for r in rows if r["run"] == run),
            max(r[key] for r in rows if r["run"] == run),
        )

    # the peer at the same records per commit
    peer_at = {f"sink-{k}": f"peer-{k * args.max_buffered}" for k in (1, 2)}
    for run in runs:
        if "steady" in run:
            print(
                f"{run:>14}: at {med(run, 'rate_per_s'):,.0f} records/s for {args.steady_s:.0f} s, produce → commit "
                f"latency median {med(run, 'latency_median_s'):.1f} s (spread "
                f"{spread(run, 'latency_median_s')[0]:.1f}–{spread(run, 'latency_median_s')[1]:.1f}), p95 "
                f"{med(run, 'latency_p95_s'):.1f} s"
            )
        else:
            low, high = spread(run, "records_per_s")
            print(
                f"{run:>14}: {med(run, 'records_per_s'):,.0f} records/s (spread {low:,.0f}–{high:,.0f}), "
                f"{med(run, 'mb_per_s'):.1f} MB/s, {med(run, 'records_per_s') / med('raw', 'records_per_s'):.1%} of raw"
                + (
                    f", {med(run, 'records_per_s') / med(peer_at[run], 'records_per_s'):.2f}x the peer at the same "
                    "records per commit"
                    if run in peer_at
                    else ""
                )
            )
        usage = [r["usage"] for r in rows if r["run"] == run][-1]
        for process, u in usage.items():
            print(f"{'':>16}{process}: peak {u['peak_mib']:,} MiB, {u['cpu_s']:,.0f} CPU-s (last round)")
    with open(root / "versus_peer.csv", "w", newline="") as f:
        columns = [
            "round",
            "run",
            "records",
            "seconds",
            "records_per_s",
            "mb_per_s",
            "rate_per_s",
            "latency_median_s",
            "latency_p95_s",
            "usage",
        ]
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        for r in rows:
            writer.writerow({**{c: r.get(c, "") for c in columns}, "usage": json.dumps(r["usage"])})
    figure, (rates, lags) = plt.subplots(1, 2, figsize=(11, 4))
    drains = [run for run in runs if "steady" not in run and run != "raw"]
    rates.bar(
        drains,
        [med(r, "records_per_s") for r in drains],
        yerr=[
            [med(r, "records_per_s") - spread(r, "records_per_s")[0] for r in drains],
            [spread(r, "records_per_s")[1] - med(r, "records_per_s") for r in drains],
        ],
        capsize=4,
    )
    rates.set_ylabel("committed records/s (median, spread)")
    rates.tick_params(axis="x", rotation=20)
    rates.set_title(f"backlog of {args.records:,} events")
    steadies = [run for run in runs if "steady" in run]
    lags.bar(
        [f"{s} median" for s in steadies] + [f"{s} p95" for s in steadies],
        [med(s, "latency_median_s") for s in steadies] + [med(s, "latency_p95_s") for s in steadies],
    )
    lags.set_ylabel("produce → commit seconds")
    lags.tick_params(axis="x", rotation=20)
    lags.set_title("steady stream, half sink-2's rate")
    figure.tight_layout()
    figure.savefig(root / "versus_peer.png", dpi=100)
    print(f"CSV and plot: {root / 'versus_peer.csv'}, {root / 'versus_peer.png'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--commit-interval", type=float, default=3.0)
    parser.add_argument("--max-buffered", type=int, default=60_000, help="records a participant buffers per instant")
    parser.add_argument("--steady-s", type=float, default=45.0, help="seconds of steady producing for the latency runs")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hudi-kafka-nb-versus-peer-"))
    rows = []
    with EmbeddedBroker(root / "broker") as broker:
        for n in range(args.repeats):
            rows += one_round(broker, args, root, n)
    summary(rows, args, root)


if __name__ == "__main__":
    main()
