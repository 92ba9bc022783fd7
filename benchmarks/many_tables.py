"""Many tables through one sink: run on demand (`make benchmark-tables`), never as a test.

For 1, 5 and 20 tables (a topic each, `--records` order events in each, produced before the sink starts) it runs one
sink of several tables (a coordinator and a participant, each one process for all tables: nbs/65_table_host) until
every table has committed its topic, and measures: the seconds from launch until every table has opened its first
instant (start-up) and until every table has committed everything, the committed rate over the whole run, the commit
cycle (END_COMMIT → commit, each table's instants, from the coordinator's log) and the peak memory of each role's
process trees together. The same topics then run through separate sinks, a coordinator and a participant per table,
where this machine holds them (1 and 5 tables; 20 is projected from 5). Compared within the run, as ratios.

`--stream` measures a database instead: `--tables` tables, each a Debezium topic of a source table (copy-on-write and
merge-on-read alternating, upserts by key), changed at `--rate` changes a second for `--minutes`, `--hot-share` of the
changes on the `--hot` first tables and the rest spread over the others, through one sink of a coordinator and two
participants. For every table it prints the produce → commit latency (from a change's Kafka timestamp to the completion
of the first commit that holds its offset) at p50 and p99, hot and quiet tables apart, against the targets (p50 under
15 s, p99 under 60 s for every table; p50 under 30 s where every table changes equally, `--hot` all of them with
`--hot-share 1`); the commits made and what each cost the coordinator; whether each table ended
equal to its source; where the coordinator's cycles went (from its protocol log); the CPU of the roles and the broker
while every table sits idle (committed, nothing produced) and while the changes stream; and peak memory. With
`--set park_idle_table_s=S` it measures the idle sink's CPU and memory again once every table has parked, as ratios of
the open tables' in the same run, and `--wake N` then changes N parked quiet tables one at a time: produce → commit of
a change that has to start its table's roles first.

`--routed N` measures what tables routed by a field cost a participant to decode, without a stack: one topic's
`--records` order events (in memory) split by region between N tables, each table's decoder (nbs/13_routing: the route
field read alone, then its own records decoded) over the whole batch, against one decode of the batch (each record
decoded once), against every table decoding every record (what each routed table did before), and against a table
host's shared consumer splitting the batch with one read of the field a record before each table decodes its own
(kafka.shared_source), in one run, as ratios.
"""

import argparse
import bisect
import contextlib
import itertools
import json
import random
import re
import statistics
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import psutil
from confluent_kafka import Producer

from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.core.kafka_records import RawRecord
from hudi_kafka_nb.dev.broker import EmbeddedBroker, create_topic
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.dev.producers import produce_orders
from hudi_kafka_nb.dev.roles import RoleProcess, participant_params
from hudi_kafka_nb.dev.source_table import CDC_SETTINGS, SourceTable, compare_mirror, mirror_ok
from hudi_kafka_nb.formats.changes import decode_changes
from hudi_kafka_nb.formats.records import decode_batch
from hudi_kafka_nb.formats.routing import route_before_decoding, routed_decoder, split_by_route
from hudi_kafka_nb.protocol.participant_state import ParticipantInstant, Progress
from hudi_kafka_nb.table.timeline import commit_log, has_committed, timeline_instants

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


STEP_MARKS = (("writing", "state=WRITING"), ("collecting", "state=COLLECTING"), ("committed", " committed="))


def coordinator_steps(log_paths):
    """(coordinator id, time, step) of each coordinator's protocol lines: "writing" (START_COMMIT), "collecting"
    (END_COMMIT) or "committed"; one coordinator id per table."""
    for path in log_paths:
        for line in Path(path).read_text().splitlines():
            who = re.search(r" id=(\S+)", line)
            if not who or "hudi_kafka_nb.protocol.coordinator" not in line:
                continue
            step = next((s for s, mark in STEP_MARKS if mark in line), None)
            if step:
                yield who[1], log_time(line), step


def cycle_phases(log_paths) -> dict[str, list[float]]:
    """Per instant: seconds WRITING (START_COMMIT → END_COMMIT), and COLLECTING → committed (the participants' writes
    and reports, then the coordinator's write and Hudi's commit)."""
    phases: dict[str, list[float]] = {"writing_s": [], "collecting_to_commit_s": []}
    last: dict[str, tuple[str, float]] = {}  # coordinator id → its last step, and when
    for who, at, step in coordinator_steps(log_paths):
        before, since = last.get(who, ("", 0.0))
        if step == "collecting" and before == "writing":
            phases["writing_s"].append(at - since)
        elif step == "committed" and before == "collecting":
            phases["collecting_to_commit_s"].append(at - since)
        last[who] = (step, at)
    return phases


def wait_for(condition, roles: list[RoleProcess], timeout_s: float, what: str, workdir: Path):
    "Until `condition()`; an error if a role exits first, or after `timeout_s`."
    deadline = time.monotonic() + timeout_s
    while not condition():
        if dead := [r.name for r in roles if not r.running()]:
            raise RuntimeError(f"{dead} exited; logs in {workdir}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not within {timeout_s}s; logs in {workdir}")
        time.sleep(0.5)


def all_committed(paths: dict[str, Path], ends: dict[str, dict[tuple[str, int], int]]):
    "A condition: every table has committed its `ends`; a table seen to have is not read again."
    pending = set(paths)

    def check() -> bool:
        pending.difference_update([n for n in pending if has_committed(paths[n], ends[n])])
        return not pending

    return check


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

    launched = time.perf_counter()
    try:
        for r in roles:
            r.start()
        threading.Thread(target=sample, daemon=True).start()
        wait_for(lambda: all(timeline_instants(path) for path in tables), roles, 900, "every first instant", workdir)
        ingesting = time.perf_counter()
        wait_for(
            lambda: all(has_committed(p, ends) for p, ends in tables.items()), roles, 3600, "every commit", workdir
        )
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
        "cycles": cycle_phases([r.log_path for r in roles if r.role == "coordinator"])["collecting_to_commit_s"],
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


def instant_time(value: str) -> float:
    "A Hudi completion time (yyyyMMddHHmmssSSS, UTC as `reading.commit_history` reads it) as seconds since the epoch."
    return datetime.strptime(value[:17], "%Y%m%d%H%M%S%f").replace(tzinfo=UTC).timestamp()


class ChangeFeed:
    """Changes of the source tables at `rate` a second, `hot_share` of them on the `hot` first tables, as Debezium's
    events on each table's topic; each delivered event's produce time by (topic, partition, offset)."""

    def __init__(self, bootstrap_servers: str, topics: dict[str, str], hot: int, hot_share: float, rate: float):
        self.topics, self.rate = topics, rate
        self.sources = {name: SourceTable(seed=i, table=name) for i, name in enumerate(topics)}
        names = list(topics)
        self.hot, self.quiet = names[:hot], names[hot:] or names[:hot]
        self.hot_share = hot_share if self.quiet is not self.hot else 1.0
        self.producer = Producer({"bootstrap.servers": bootstrap_servers, "linger.ms": 20})
        self.produced: dict[str, dict[int, float]] = defaultdict(dict)  # topic → offset → produce time (one partition)
        self.failures: list = []
        self.rng = random.Random(11)

    def _delivered(self, err, msg):
        if err:
            self.failures.append(err)
        else:
            self.produced[msg.topic()][msg.offset()] = msg.timestamp()[1] / 1000

    def _send(self, name: str, events):
        for key, value in events:
            while True:
                try:
                    self.producer.produce(self.topics[name], value, key, on_delivery=self._delivered)
                    break
                except BufferError:
                    self.producer.poll(0.05)

    def snapshot(self, rows: int):
        "Each table's first `rows` rows, as Debezium's snapshot reads them."
        for name, source in self.sources.items():
            self._send(name, source.snapshot(rows))
        self.producer.flush(60)

    def run(self, seconds: float, tick_s: float = 0.1):
        "Changes at the rate for `seconds`, then everything delivered."
        started, due = time.monotonic(), 0.0
        while (now := time.monotonic() - started) < seconds:
            due += self.rate * tick_s
            while due >= 1:
                due -= 1
                tables = self.hot if self.rng.random() < self.hot_share else self.quiet
                name = self.rng.choice(tables)
                self._send(name, self.sources[name].changes(1))
            self.producer.poll(0)
            time.sleep(max(0.0, tick_s - (time.monotonic() - started - now)))
        self.producer.flush(120)
        if len(self.producer) or self.failures:
            raise RuntimeError(f"{len(self.producer)} undelivered, {len(self.failures)} failed: {self.failures[:1]}")

    def ends(self, name: str) -> dict[tuple[str, int], int]:
        topic = self.topics[name]
        return {(topic, 0): max(self.produced[topic], default=-1) + 1}


def latencies(table_path: Path, produced: dict[int, float], topic: str) -> tuple[list[float], int]:
    """Produce → commit seconds of each change on `topic` (`produced`: offset → produce time): to the completion of the
    first commit holding its offset; and the number of commits."""
    commits = sorted(
        (instant_time(c["completed"]), c["offsets"].get(f"{topic}[0]", (0, 0))[1])
        for c in commit_log(table_path, archived=True)  # a 10-minute run's first commits are archived by its end
        if c["completed"]
    )
    # by completion: how far the table had committed the topic (its offsets only grow along the chain)
    reach = list(itertools.accumulate((next_offset for _, next_offset in commits), max))
    waits = []
    for offset, at in produced.items():
        first = bisect.bisect_right(reach, offset)
        if first < len(reach):
            waits.append(commits[first][0] - at)
    return waits, len(commits)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cpu_per_process(before: dict, after: dict, seconds: float) -> dict[str, float]:
    "Cores used between two readings of each process's CPU seconds, by role and process name (pids summed)."
    used: dict[str, float] = defaultdict(float)
    for (role, process, pid), total in after.items():
        used[f"{role} {process}"] += (total - before.get((role, process, pid), 0.0)) / seconds
    return {k: v for k, v in sorted(used.items()) if v >= 0.005}


def role_threads(role: RoleProcess) -> int:
    "Threads of a role's processes now: its Python's (each Kafka client has three or four) and its JVM's."
    total = 0
    for proc in role.tree():
        with contextlib.suppress(psutil.Error):
            total += proc.num_threads()
    return total


def parked_tables(log_path: Path) -> int:
    "How many tables' coordinators the protocol log shows parked (`park_idle_table_s`) and not started again since."
    last: dict[str, str] = {}
    for line in log_path.read_text().splitlines():
        if "hudi_kafka_nb.protocol.coordinator" in line and (who := re.search(r" id=(\S+) state=(\S+)", line)):
            last[who[1]] = who[2]
    return sum(1 for state in last.values() if state in ("PARKED", "STOPPED"))


def commits_between(log_path: Path, start: float, end: float) -> int:
    "How many commits the coordinator's protocol log shows between `start` and `end` (seconds since the epoch)."
    return sum(1 for _, at, step in coordinator_steps([log_path]) if step == "committed" and start <= at <= end)


def stream_database(
    broker: EmbeddedBroker,
    root: Path,
    tables: int,
    hot: int,
    hot_share: float,
    rate: float,
    minutes: float,
    idle_s: float = 60.0,
    settings: dict | None = None,
    wake: int = 0,
) -> dict:
    """One sink (a coordinator, two participants) mirroring `tables` source tables that change at `rate` a second for
    `minutes`; each table's latencies and content, the coordinator's cycles, the roles' (and the broker's) CPU and
    memory, and their CPU for `idle_s` before the changes begin, every table committed and nothing produced. With
    `park_idle_table_s` in `settings`, the same again once every table has parked; and after the changes, `wake` quiet
    tables get a change each, and the time each takes to be committed from a parked table."""
    bootstrap_servers = broker.bootstrap_servers
    prefix = f"db{uuid.uuid4().hex[:6]}"
    names = [f"t{i:03d}" for i in range(tables)]
    topics = {name: f"{prefix}.public.{name}" for name in names}
    for topic in topics.values():
        create_topic(bootstrap_servers, topic, 1)
    feed = ChangeFeed(bootstrap_servers, topics, hot, hot_share, rate)
    feed.snapshot(20)
    cdc = {k: v for k, v in CDC_SETTINGS.items() if k != "hudi_options"}
    params = {
        "bootstrap_servers": bootstrap_servers,
        **cdc,
        "topics_regex": re.escape(prefix) + r"\.public\..*",
        "table_name": "{table}",
        "table_path": str(root / "{table_name}"),
        "control_topic": f"control-{prefix}-{{table_name}}",
        "commit_interval_s": 5.0,
        "write_timeout_s": 300.0,
        "min_participants": 2,
        # copy-on-write every other table
        "tables": {name: {"table_type": "COPY_ON_WRITE"} for name in names[1::2]},
        **(settings or {}),
    }
    roles = [RoleProcess("coordinator", params, root, name="coordinator", direct=True)] + [
        RoleProcess("participant", participant_params(params, 2), root, name=f"participant-{i}", direct=True)
        for i in range(2)
    ]
    peak, cpu, stop = {r.name: 0 for r in roles}, {}, threading.Event()

    def sample():
        while not stop.is_set():
            with contextlib.suppress(Exception):
                times = psutil.Process(broker.process.pid).cpu_times()
                cpu[("broker", "java", broker.process.pid)] = times.user + times.system
            for r in roles:
                peak[r.name] = max(peak[r.name], r.memory_bytes())
                for proc in r.tree():
                    try:
                        times = proc.cpu_times()
                        cpu[(r.name, proc.name(), proc.pid)] = times.user + times.system
                    except Exception:
                        pass
            time.sleep(2.0)

    paths = {name: root / name for name in names}
    launched = time.monotonic()
    try:
        for r in roles:
            r.start()
        threading.Thread(target=sample, daemon=True).start()
        ends = {name: feed.ends(name) for name in names}
        wait_for(all_committed(paths, ends), roles, 1800, "every snapshot", root)
        startup = time.monotonic() - launched
        # nothing produced: what the tables cost while they wait (the sampler's reading two seconds apart)
        time.sleep(idle_s / 4)
        idle_from, idle_start = dict(cpu), time.monotonic()
        time.sleep(idle_s)
        idle = cpu_per_process(idle_from, dict(cpu), time.monotonic() - idle_start)
        memory_open = {r.name: r.memory_bytes() / 2**20 for r in roles}
        threads_open = {r.name: role_threads(r) for r in roles}
        parked: dict = {}
        if park_s := float((settings or {}).get("park_idle_table_s", 0)):
            # every table parked: what the sink holds when no table changes (memory now, not the peak)
            log_path = root / "coordinator.log"
            wait_for(lambda: parked_tables(log_path) >= tables, roles, park_s + 600, "every table parked", root)
            time.sleep(idle_s / 4)
            parked_from, parked_start = dict(cpu), time.monotonic()
            time.sleep(idle_s)
            parked = {
                "cores": cpu_per_process(parked_from, dict(cpu), time.monotonic() - parked_start),
                "mib": {r.name: r.memory_bytes() / 2**20 for r in roles},
            }
        cpu_before = dict(cpu)
        streaming, streaming_at = time.monotonic(), time.time()
        feed.run(minutes * 60)
        stopped, stopped_at = time.monotonic(), time.time()
        wait_for(all_committed(paths, {n: feed.ends(n) for n in names}), roles, 1800, "every change", root)
        drained, drained_at = time.monotonic(), time.time()
        cpu_streaming = cpu_per_process(cpu_before, dict(cpu), drained - streaming)
        woken = wake_parked(feed, paths, roles, root, wake, park_s) if wake and park_s else []
        restarted = restart_at_rest(feed, paths, roles, root, tables) if park_s else {}
    finally:
        stop.set()
        for r in roles:
            r.stop()
    per_table = {}
    for name in names:
        # the changes streamed (not the snapshot, produced before the sink started, nor a parked table's wake-up)
        streamed = {o: at for o, at in feed.produced[topics[name]].items() if streaming_at <= at <= stopped_at}
        waits, commits = latencies(paths[name], streamed, topics[name])
        per_table[name] = {
            "p50": percentile(waits, 0.5),
            "p99": percentile(waits, 0.99),
            "changes": len(waits),
            "commits": commits,
            "equal": mirror_ok(compare_mirror(paths[name], feed.sources[name].rows)),
        }
    return {
        "tables": per_table,
        "hot": feed.hot,
        "startup_s": startup,
        "streamed_s": stopped - streaming,
        "drain_s": drained - stopped,
        "changes": sum(len(offsets) for offsets in feed.produced.values()),
        "cpu_cores": cpu_streaming,
        "idle_cores": idle,
        "cycles": cycle_phases([root / "coordinator.log"]),
        "commits": commits_between(root / "coordinator.log", streaming_at, drained_at),
        "peak_mib": {k: v / 2**20 for k, v in peak.items()},
        "open_mib": memory_open,
        "open_threads": threads_open,
        "parked": parked,
        "woken_s": woken,
        "restarted": restarted,
    }


def restart_at_rest(feed, paths: dict[str, Path], roles, root: Path, tables: int) -> dict:
    """The roles stopped and started again with every table at rest: the memory they hold once each has started every
    table parked, and how long a change then takes to be committed (its roles' Spark started first)."""
    for r in roles:
        r.stop()
    marks = {r.name: r.log_path.read_text().count("starts parked") for r in roles}
    for r in roles:
        r.start()

    def all_parked() -> bool:
        return all(r.log_path.read_text().count("starts parked") - marks[r.name] >= tables for r in roles)

    wait_for(all_parked, roles, 600, "every table started parked", root)
    time.sleep(10)
    mib = {r.name: r.memory_bytes() / 2**20 for r in roles}
    name = feed.quiet[-1]
    topic = feed.topics[name]
    feed._send(name, feed.sources[name].changes(1))
    feed.producer.flush(60)
    offset = max(feed.produced[topic])
    wait_for(all_committed({name: paths[name]}, {name: feed.ends(name)}), roles, 300, f"{name} after the restart", root)
    return {"mib": mib, "first_change_s": latencies(paths[name], {offset: feed.produced[topic][offset]}, topic)[0]}


def wake_parked(feed, paths: dict[str, Path], roles, root: Path, count: int, park_s: float) -> list[float]:
    """Once the quiet tables have parked again, a change to `count` of them (one at a time, a few seconds apart): each
    one's produce → commit seconds."""
    wait_for(lambda: parked_tables(root / "coordinator.log") >= len(feed.quiet), roles, park_s + 600, "parked", root)
    waits = []
    for name in feed.quiet[:count]:
        topic = feed.topics[name]
        feed._send(name, feed.sources[name].changes(1))
        feed.producer.flush(60)
        offset = max(feed.produced[topic])
        wait_for(all_committed({name: paths[name]}, {name: feed.ends(name)}), roles, 300, f"{name} woken", root)
        waits.extend(latencies(paths[name], {offset: feed.produced[topic][offset]}, topic)[0])
    return waits


def stream_report(r: dict) -> list[str]:
    tables = r["tables"]
    hot = [t for n, t in tables.items() if n in r["hot"]]
    quiet = [t for n, t in tables.items() if n not in r["hot"]]
    lines = [
        f"{len(tables)} tables, {r['changes']:,} events over {r['streamed_s']:.0f} s; every snapshot committed "
        f"{r['startup_s']:.0f} s after launch, every change {r['drain_s']:.0f} s after the last was produced; "
        f"roles' CPU {sum(r['cpu_cores'].values()):.2f} cores ("
        + ", ".join(f"{k} {v:.2f}" for k, v in r["cpu_cores"].items())
        + "); peak memory "
        + ", ".join(f"{k} {v:,.0f} MiB" for k, v in r["peak_mib"].items())
        + f" ({sum(r['peak_mib'].values()):,.0f} MiB)",
    ]
    for label, group in (("hot", hot), ("quiet", quiet)):
        group = [t for t in group if t["changes"]]
        if not group:
            lines.append(f"  {label} tables: no change streamed")
            continue
        p50s, p99s = [t["p50"] for t in group], [t["p99"] for t in group]
        lines.append(
            f"  {label} tables ({len(group)}): produce → commit p50 median {statistics.median(p50s):.1f} s, worst "
            f"{max(p50s):.1f} s; p99 median {statistics.median(p99s):.1f} s, worst {max(p99s):.1f} s; commits per "
            f"table median {statistics.median(t['commits'] for t in group):.0f}"
        )
    lines.append(
        f"  idle (every table committed, nothing produced): {sum(r['idle_cores'].values()):.2f} cores ("
        + ", ".join(f"{k} {v:.2f}" for k, v in r["idle_cores"].items())
        + f"); memory now {sum(r['open_mib'].values()):,.0f} MiB; threads "
        + ", ".join(f"{k} {v:,}" for k, v in r["open_threads"].items())
    )
    if parked := r["parked"]:
        idle, now = sum(r["idle_cores"].values()), sum(parked["cores"].values())
        held, open_ = sum(parked["mib"].values()), sum(r["open_mib"].values())
        lines.append(
            f"  every table parked: {now:.2f} cores ("
            + ", ".join(f"{k} {v:.2f}" for k, v in parked["cores"].items())
            + f"), {now / idle:.2f}x of idle and open; memory now {held:,.0f} MiB ({held / open_:.2f}x): "
            + ", ".join(f"{k} {v:,.0f} MiB" for k, v in parked["mib"].items())
        )
    if restarted := r["restarted"]:
        held, open_ = sum(restarted["mib"].values()), sum(r["open_mib"].values())
        lines.append(
            f"  restarted with every table at rest: memory now {held:,.0f} MiB ({held / open_:.2f}x of the open "
            "tables'): "
            + ", ".join(f"{k} {v:,.0f} MiB" for k, v in restarted["mib"].items())
            + f"; the first change then committed after {max(restarted['first_change_s'], default=float('nan')):.1f} s"
        )
    if r["woken_s"]:
        lines.append(
            f"  a change to a parked table, committed after: median {statistics.median(r['woken_s']):.1f} s, worst "
            f"{max(r['woken_s']):.1f} s over {len(r['woken_s'])} tables"
        )
    seconds = r["streamed_s"] + r["drain_s"]
    coordinator = sum(v for k, v in r["cpu_cores"].items() if k.startswith("coordinator")) * seconds
    lines.append(
        f"  {r['commits']} commits while streaming and draining ({r['commits'] / seconds * 60:.0f} a minute), "
        f"{coordinator / max(1, r['commits']):.2f} CPU-seconds of the coordinator each"
    )
    for phase, values in r["cycles"].items():
        if values:
            lines.append(
                f"  coordinator {phase}: median {statistics.median(values):.1f} s, p90 {percentile(values, 0.9):.1f} s "
                f"over {len(values)} instants"
            )
    changed = [t for t in tables.values() if t["changes"]]
    worst_p50, worst_p99 = max(t["p50"] for t in changed), max(t["p99"] for t in changed)
    if len(hot) == len(tables):  # every table changing equally: each change waits up to a round of all the commits
        met, target = worst_p50 < 30, "every table p50 under 30 s, all changing equally"
    else:
        met, target = worst_p50 < 15 and worst_p99 < 60, "every table p50 under 15 s, p99 under 60 s"
    lines.append(
        f"  targets ({target}): {'met' if met else 'NOT met'}: worst p50 {worst_p50:.1f} s, worst p99 {worst_p99:.1f} s"
    )
    unequal = [n for n, t in tables.items() if not t["equal"]]
    lines.append(f"  content: {'every table equal to its source' if not unequal else f'NOT equal: {unequal}'}")
    return lines


def routed_decoding(tables: int, records: int, rounds: int = 5) -> list[str]:
    """Seconds to decode one topic's batch for `tables` tables routed by region, against one decode of it and against
    each table decoding every record, as medians of `rounds`."""
    regions = [f"r{i:02d}-x" for i in range(tables)]
    batch = [
        RawRecord("web", i % 8, i // 8, 0, None, msgspec.json.encode({**order, "region": regions[i % tables]}))
        for i, order in enumerate(
            {"order_id": f"o{i}", "customer_id": f"c{i % 97}", "status": "paid", "amount": 1.5, "quantity": 2}
            for i in range(records)
        )
    ]
    base = {"bootstrap_servers": "127.0.0.1:1", "topics": "web", "table_path": "/unused", "route_field": "region"}
    base |= {"value_schema": DEMO_VALUE_SCHEMA, "partition_field": "region"}
    configs = [load_config(base, table_name=f"web_{i}", route_regex=re.escape(r)) for i, r in enumerate(regions)]
    decoders = [routed_decoder(decode_batch, c) for c in configs]

    def median_s(work) -> float:
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            work()
            times.append(time.perf_counter() - started)
        return statistics.median(times)

    once = median_s(lambda: decode_batch(batch, configs[0]))
    routed = median_s(lambda: [d(batch, c) for d, c in zip(decoders, configs)])
    routes = [route_before_decoding(c) for c in configs]
    shared = median_s(lambda: [d(own, c) for d, c, own in zip(decoders, configs, split_by_route(batch, routes))])
    every = median_s(lambda: [decode_batch(batch, c) for c in configs])
    kept = sum(d(batch, c).rows.num_rows for d, c in zip(decoders, configs))
    return [
        f"{tables} tables routed by a field over {records:,} records ({kept:,} rows kept, each in one table):",
        f"  one decode of the batch          {once:.3f} s  ({once / records * 1e6:.2f} µs a record)",
        f"  the {tables} tables' routed decoders  {routed:.3f} s  ({routed / once:.1f}× one decode)",
        f"  split once, then each its own    {shared:.3f} s  ({shared / once:.1f}× one decode: a table host)",
        f"  each table decoding every record {every:.3f} s  ({every / once:.1f}× one decode)",
    ]


def batch_cost(sizes: tuple[int, ...] = (1, 20, 200), rounds: int = 2_000) -> list[str]:
    """A participant's CPU for one read's batch of change events, decoded into rows and counted against its partition:
    what each table's reads cost, whatever their size (a quiet table of a hundred reads a few records at a time)."""
    config = load_config(
        {k: v for k, v in CDC_SETTINGS.items() if k != "hudi_options"},
        bootstrap_servers="127.0.0.1:1",
        topics="db.public.customers",
        table_path="/unused",
        table_name="customers",
    )
    events = [value for _, value in SourceTable().snapshot(max(sizes)) if value]
    lines = ["a participant's CPU for one read's batch of change events (decoded, counted), medians of 5 rounds:"]
    for size in sizes:
        batch = [RawRecord("db.public.customers", 0, i, 0, None, v) for i, v in enumerate(events[:size])]
        progress = {("db.public.customers", 0): Progress("db.public.customers", 0, 0, 0)}
        instant = ParticipantInstant(1, "001", progress, {}, False)
        repeats, times = max(1, rounds // size), []
        for _ in range(5):
            started = time.process_time()
            for _ in range(repeats):
                decoded = decode_changes(batch, config)
                instant.count(decoded.rows, decoded.dead, config.event_time_field)
            times.append((time.process_time() - started) / repeats)
        cost = statistics.median(times)
        lines.append(f"  {size:4d} records  {cost * 1e6:7.0f} µs  ({cost / size * 1e6:.1f} µs a record)")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000, help="order events per table")
    parser.add_argument("--tables", help="table counts through one sink (1,5,20; with --stream, 100)")
    parser.add_argument("--separate", default="1,5", help="table counts also run as separate sinks")
    parser.add_argument("--stream", action="store_true", help="a database's changes streaming instead (see above)")
    parser.add_argument("--hot", type=int, default=5, help="--stream: the tables most changes go to")
    parser.add_argument("--hot-share", type=float, default=0.9, help="--stream: their share of the changes")
    parser.add_argument("--rate", type=float, default=1000, help="--stream: changes a second")
    parser.add_argument("--minutes", type=float, default=10, help="--stream: how long the changes stream")
    parser.add_argument("--wake", type=int, default=0, help="--stream: parked quiet tables then changed, one by one")
    parser.add_argument("--routed", type=int, default=0, help="tables routed by a field: their decoding alone (above)")
    parser.add_argument("--batch-cost", action="store_true", help="a participant's CPU for one read's batch alone")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="--stream: a sink setting, e.g. commit_interval_s=10",
    )
    args = parser.parse_args()
    if args.routed:
        print("\n".join(routed_decoding(args.routed, args.records)), flush=True)
        return
    if args.batch_cost:
        print("\n".join(batch_cost()), flush=True)
        return
    root = Path(tempfile.mkdtemp(prefix="bench-tables-"))
    args.tables = args.tables or ("100" if args.stream else "1,5,20")
    if args.stream:
        with EmbeddedBroker(root / "broker") as broker:
            for n in [int(x) for x in args.tables.split(",")]:
                settings = {k: json.loads(v) for k, v in (kv.split("=", 1) for kv in args.set)}
                r = stream_database(
                    broker,
                    root / f"stream-{n}",
                    n,
                    args.hot,
                    args.hot_share,
                    args.rate,
                    args.minutes,
                    settings=settings,
                    wake=args.wake,
                )
                print("\n".join(stream_report(r)), flush=True)
        return
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
