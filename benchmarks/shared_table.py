"""The sink on a shared table: run on demand (`make benchmark-shared`), never as a test.

Two rounds in one run, each a fresh stack (a coordinator and two participants upserting `--orders` orders into a
merge-on-read table under Hudi's optimistic concurrency control, docs/shared-tables.md) fed `--rate` order events a
second for `--seconds`, more than the sink commits: the sink alone, then the same sink while a user's own Spark job
(dev.users_jobs) deletes a batch of retired orders every `--every` seconds. For each round it prints the records the
sink committed a second over that window (from its commits' lines in the coordinator's log), the commit durations
(END_COMMIT to the commit) at p50 and p90, and the instants rolled back for a conflict or a failed commit; then the
shared round's rate as a ratio of the alone round's (target: at least 0.8x) and the instants redone against the
erasure batches committed in the window (target: at most one per conflict). Each table is then drained and judged
against its topic as the tests judge it.
"""

import argparse
import re
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path

from hudi_kafka_nb.dev.broker import EmbeddedBroker
from hudi_kafka_nb.dev.chaos import LocalStack
from hudi_kafka_nb.dev.users_jobs import ERASURE_JOB, OPTIMISTIC, beside, printed, start_job, users_options
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok
from hudi_kafka_nb.table.reading import coordinator_status

RETIRED_BATCH = 50
STATE_LINE = re.compile(r"^(\S+ \S+) INFO \S+ role=coordinator \S+ state=(COLLECTING|WAITING) instant=(\d+)")
COMMITTED = re.compile(r" committed=\d+ records=(\d+)")


def commits_in(log: str, since: float, until: float) -> tuple[list[float], int]:
    """The commit durations (from each instant's END_COMMIT, COLLECTING, to its commit) of the commits made between
    `since` and `until` (epoch seconds), and the records they committed, from the coordinator's log."""
    ended, durations, records = {}, [], 0
    for line in log.splitlines():
        if not (found := STATE_LINE.match(line)):
            continue
        at = datetime.strptime(found[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()
        if found[2] == "COLLECTING":
            ended[found[3]] = at
        elif (written := COMMITTED.search(line)) and found[3] in ended and since <= at <= until:
            durations.append(at - ended.pop(found[3]))
            records += int(written[1])
    return durations, records


def one_round(workdir: Path, broker: EmbeddedBroker, shared: bool, args) -> dict:
    "Drain a backlog through a fresh sink, alone or beside the user's erasures; what the round measured."
    batches = [[f"retired-{b:02d}-{i:03d}" for i in range(RETIRED_BATCH)] for b in range(args.batches)]
    retired = {key for batch in batches for key in batch}
    stack = LocalStack(
        workdir,
        participants=2,
        broker=broker,
        orders=args.orders,
        hudi_options={"hoodie.compact.inline.max.delta.commits": "3", **OPTIMISTIC},
        # the retired orders are erased (shared) or stay (alone)
        expected_shape=(lambda row: None if row["order_id"] in retired else row) if shared else None,
    ).start()
    log, erased = workdir / "coordinator.log", []
    with beside(stack) as jobs:
        stack.send([_retired_order(key) for key in sorted(retired)])
        stack.produce(2_000)
        stack.wait_committed(300)
        started = time.time()
        stack.start_producing(args.rate)
        if shared:
            options = users_options(OPTIMISTIC)
            jobs.append(start_job(ERASURE_JOB, stack.table_path, options, batches, args.every, cwd=workdir))
        time.sleep(args.seconds)
        ended = time.time()
        stack.stop_producing()
        if jobs:
            erased = printed(jobs[0])
        stack.wait_committed(1_800)
    report = stack.verify()
    durations, records = commits_in(log.read_text(), started, ended)
    status = coordinator_status(stack.table_path) or {}
    return {
        "records_per_s": records / (ended - started),
        "commit_p50_s": statistics.median(durations),
        "commit_p90_s": statistics.quantiles(durations, n=10)[-1] if len(durations) > 1 else durations[0],
        "commits": len(durations),
        "conflicts": status.get("conflicts", 0),
        "aborts": status.get("aborts", 0),
        "batches_in_window": sum(1 for line in erased if line["at"] <= ended),
        "verdict": "ok" if verdict_ok(report) else verdict(report),
    }


def _retired_order(key: str) -> dict:
    "An order event of a key the user's job erases later (it is never updated again)."
    return {
        "order_id": key,
        "customer_id": "c0",
        "region": "eu",
        "status": "paid",
        "amount": 1.0,
        "quantity": 1,
        "event_time": "2026-11-23T10:00:00.000",
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rate", type=int, default=20_000, help="order events produced a second, above what the sink commits"
    )
    parser.add_argument("--seconds", type=float, default=150.0, help="how long each round is measured")
    parser.add_argument("--orders", type=int, default=20_000, help="orders the events update")
    parser.add_argument("--batches", type=int, default=4, help=f"erasure batches of {RETIRED_BATCH} orders")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between two erasure batches")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="shared-table-") as scratch,
        EmbeddedBroker(Path(scratch) / "broker") as broker,
    ):
        rounds = {name: one_round(Path(scratch) / name, broker, name == "shared", args) for name in ("alone", "shared")}
    for name, measured in rounds.items():
        print(
            f"{name:>6}: "
            + ", ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in measured.items())
        )
    ratio = rounds["shared"]["records_per_s"] / rounds["alone"]["records_per_s"]
    batches = rounds["shared"]["batches_in_window"]
    redone = rounds["shared"]["conflicts"] + rounds["shared"]["aborts"]
    print(
        f"shared / alone: {ratio:.2f}x committed records a second (target 0.8x): {'met' if ratio >= 0.8 else 'NOT met'}"
    )
    print(f"instants redone: {redone} for {batches} erasure batches in the window (target: at most one a conflict)")


if __name__ == "__main__":
    main()
