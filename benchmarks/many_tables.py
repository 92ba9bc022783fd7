"""Many tables through one sink: run on demand (`make benchmark-tables`), never as a test.

For 1, 5 and 20 tables (a topic each, `--records` order events in each, produced before the sink starts) it runs one
sink of several tables (a coordinator and a participant, each one process for all tables: nbs/60_table_host) until
every table has committed its topic, and measures: the seconds from launch until every table has opened its first
instant (start-up) and until every table has committed everything, the committed rate over the whole run, the commit
cycle (END_COMMIT → commit, each table's instants, from the coordinator's log) and the peak memory of each role's
process trees together. The same topics then run through separate sinks, a coordinator and a participant per table,
where this machine holds them (1 and 5 tables; 20 is projected from 5). Compared within the run, as ratios.
"""

import argparse
import re
import statistics
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from hudi_kafka_nb.config import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.dev.broker import EmbeddedBroker, create_topic
from hudi_kafka_nb.dev.producers import produce_orders
from hudi_kafka_nb.dev.roles import RoleProcess
from hudi_kafka_nb.timeline import has_committed, timeline_instants

COMMON = {
    "partition_field": "region",
    "value_schema": DEMO_VALUE_SCHEMA,
    "commit_interval_s": 3.0,
    "write_timeout_s": 300.0,
    "min_participants": 1,
    "max_buffered_records": 60_000,
}


def log_time(line: str) -> float:
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()


def commit_cycles(log_paths) -> list[float]:
    "Seconds from each instant's END_COMMIT (state COLLECTING) to its commit, per coordinator id (one per table)."
    cycles, collecting = [], {}
    for path in log_paths:
        for line in Path(path).read_text().splitlines():
            who = re.search(r" id=(\S+)", line)
            if not who or "hudi_kafka_nb.coordinator" not in line:
                continue
            if "state=COLLECTING" in line:
                collecting[who[1]] = log_time(line)
            elif " committed=" in line and who[1] in collecting:
                cycles.append(log_time(line) - collecting.pop(who[1]))
    return cycles


def run_sinks(sinks: list[dict], tables: dict[Path, dict], workdir: Path) -> dict:
    """Run `sinks` (each a coordinator and a participant) until every table committed its `ends`; timings and peak
    memory."""
    roles = [
        RoleProcess(role, params, workdir, name=f"{role}-{i}", direct=True)
        for i, params in enumerate(sinks)
        for role in ("coordinator", "participant")
    ]
    peak, stop = {"coordinator": 0, "participant": 0}, threading.Event()

    def sample():
        while not stop.is_set():
            for kind in peak:
                peak[kind] = max(peak[kind], sum(r.memory_bytes() for r in roles if r.role == kind and r.running()))
            time.sleep(1.0)

    def wait(condition, timeout_s):
        deadline = time.monotonic() + timeout_s
        while not condition():
            if dead := [r.name for r in roles if not r.running()]:
                raise RuntimeError(f"{dead} exited; logs in {workdir}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"not within {timeout_s}s; logs in {workdir}")
            time.sleep(0.5)

    launched = time.perf_counter()
    try:
        for r in roles:
            r.start()
        threading.Thread(target=sample, daemon=True).start()
        wait(lambda: all(timeline_instants(path) for path in tables), 900)
        ingesting = time.perf_counter()
        wait(lambda: all(has_committed(path, ends) for path, ends in tables.items()), 3600)
        done = time.perf_counter()
    finally:
        stop.set()
        for r in roles:
            r.stop()
    records = sum(sum(ends.values()) for ends in tables.values())
    return {
        "startup_s": ingesting - launched,
        "total_s": done - launched,
        "rate": records / (done - launched),
        "cycles": commit_cycles([r.log_path for r in roles if r.role == "coordinator"]),
        **{f"{k}_mib": v / 2**20 for k, v in peak.items()},
    }


def line(label: str, r: dict) -> str:
    cycle = (
        f"median {statistics.median(r['cycles']):.1f} s over {len(r['cycles'])} commits"
        if r["cycles"]
        else "no commit logged"
    )
    return (
        f"{label}: every table ingesting {r['startup_s']:.0f} s after launch, all committed after {r['total_s']:.0f} s "
        f"({r['rate']:,.0f} records/s); commit cycle {cycle}; peak memory coordinator(s) {r['coordinator_mib']:,.0f} "
        f"MiB, participant(s) {r['participant_mib']:,.0f} MiB"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000, help="order events per table")
    parser.add_argument("--tables", default="1,5,20", help="table counts through one sink")
    parser.add_argument("--separate", default="1,5", help="table counts also run as separate sinks")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-tables-"))
    results: dict = defaultdict(dict)
    with EmbeddedBroker(root / "broker") as broker:
        for n in [int(x) for x in args.tables.split(",")]:
            prefix = f"db{uuid.uuid4().hex[:6]}"
            topics = [f"{prefix}.public.t{i:02d}" for i in range(n)]
            ends = {}
            for topic in topics:
                create_topic(broker.bootstrap_servers, topic, 2)
                ends[topic] = produce_orders(broker.bootstrap_servers, topic, args.records, progress=False, quiet=True)
            base = {"bootstrap_servers": broker.bootstrap_servers, **COMMON}
            run = root / f"one-sink-{n}"
            one = {
                **base,
                "topics_regex": re.escape(prefix) + r"\..*",
                "table_name": "{table}",
                "table_path": str(run / "{table_name}"),
                "control_topic": f"control-{prefix}-{{table_name}}",
            }
            results[n]["one"] = run_sinks([one], {run / t.rsplit(".", 1)[-1]: ends[t] for t in topics}, run)
            print(line(f"one sink, {n} table(s), {n * args.records:,} records", results[n]["one"]), flush=True)
            if str(n) in args.separate.split(","):
                run = root / f"separate-{n}"
                sinks = [
                    {
                        **base,
                        "topics": t,
                        "table_name": t.rsplit(".", 1)[-1],
                        "table_path": str(run / t.rsplit(".", 1)[-1]),
                        "control_topic": f"control-{prefix}-sep-{t.rsplit('.', 1)[-1]}",
                    }
                    for t in topics
                ]
                results[n]["separate"] = run_sinks(sinks, {run / t.rsplit(".", 1)[-1]: ends[t] for t in topics}, run)
                print(line(f"separate sinks, {n} table(s)", results[n]["separate"]), flush=True)
    for n, r in results.items():
        if "separate" in r:
            one, sep = r["one"], r["separate"]
            memory = (sep["coordinator_mib"] + sep["participant_mib"]) / (
                one["coordinator_mib"] + one["participant_mib"]
            )
            print(
                f"{n} table(s), separate sinks / one sink: memory {memory:.2f}, time to commit all "
                f"{sep['total_s'] / one['total_s']:.2f}"
            )
    seps = {n: r["separate"] for n, r in results.items() if "separate" in r}
    if seps and max(results) not in seps:
        n, big = max(seps), max(results)
        per_table = (seps[n]["coordinator_mib"] + seps[n]["participant_mib"]) / n
        one = results[big]["one"]
        print(
            f"{big} tables as separate sinks, projected from {n}: about {per_table * big:,.0f} MiB; one sink of {big} "
            f"tables: {one['coordinator_mib'] + one['participant_mib']:,.0f} MiB "
            f"({per_table * big / (one['coordinator_mib'] + one['participant_mib']):.1f}×)"
        )


if __name__ == "__main__":
    main()
