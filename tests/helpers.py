"""Helpers shared by the pytest suites."""

import contextlib
import os
import re
import signal
import time

from hudi_kafka_nb.dev.producers import send_events
from hudi_kafka_nb.dev.servers import patient
from hudi_kafka_nb.kafka.letters_read import read_dead_letters  # noqa: F401 (the suites import it from here
from hudi_kafka_nb.table.reading import produced_coordinates  # noqa: F401 (the same)
from hudi_kafka_nb.table.timeline import commit_log


def assert_offsets_continue(table_path):
    """Invariant 2: each commit's start offsets are the previous commit's next offsets."""
    committed = {}
    for commit in commit_log(table_path):
        for tp, (start, end) in commit["offsets"].items():
            assert committed.get(tp, start) == start, (
                f"{commit['instant']}: {tp} starts at {start}, previous ended at {committed.get(tp)}"
            )
            committed[tp] = end
    return committed


def order_ids_config(table_path):
    "Settings of a table of order ids alone at `table_path`, for tests that write it in-process (no broker behind)."
    from hudi_kafka_nb.config.settings import load_config

    return load_config(
        bootstrap_servers="127.0.0.1:1",
        topics=["orders"],
        table_path=str(table_path),
        table_name="orders",
        value_schema={"order_id": "string"},
    )


def wait_for(condition, timeout_s=60, what="condition", poll_s=0.1):
    """Poll `condition` until it is true; TimeoutError naming `what` was awaited if `timeout_s` (stretched by `patient`
    on a loaded machine) passes first."""
    timeout_s = patient(timeout_s)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(poll_s)
    raise TimeoutError(f"waited {timeout_s}s for {what}")


def order_event(i, prefix="o", **extra):
    "One order event of the demo's schema, plus `extra` fields."
    return {
        "order_id": f"{prefix}{i:03d}",
        "customer_id": f"c{i % 7}",
        "region": "eu",
        "status": "paid",
        "amount": 1.0,
        "quantity": 1,
        "event_time": f"2026-11-23T10:{i // 60 % 60:02d}:{i % 60:02d}",
        **extra,
    }


CATALOG_QUERY = """
import json, os, sys
from hudi_kafka_nb.dev.metastore import catalog_session_conf
os.environ["HUDI_KAFKA_NB_SPARK_CONF"] = ",".join(f"{k}={v}" for k, v in catalog_session_conf(sys.argv[1]).items())
from hudi_kafka_nb.table.spark import spark_session
spark = spark_session("catalog reader")
answers = {name: [list(row) for row in spark.sql(query).collect()] for name, query in json.loads(sys.argv[2]).items()}
print(json.dumps(answers, default=str))
spark.stop()
"""


def catalog_query(uris: str, queries: dict[str, str], cwd) -> dict[str, list]:
    """Each SQL query of `queries` answered by a Spark of its own whose catalog is the metastore at `uris`, as a user's
    notebook would be: rows as lists, by query name."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", CATALOG_QUERY, uris, json.dumps(queries)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def log_of(stack, name):
    """The log of role `name` of a LocalStack so far."""
    return (stack.workdir / f"{name}.log").read_text(errors="replace")


def produced_while_the_registry_is_away(stack, registry, pairs):
    """`pairs` (key, value and, for a record broken on purpose, its mark) produced to the stack's topic with its schema
    registry killed; the registry back once the participant says it waits for it, then every record committed."""
    waited = log_of(stack, "participant-0")
    registry.kill()
    stack.feed.add_ends(send_events(stack.broker.bootstrap_servers, stack.topic, pairs))
    wait_for(
        lambda: "waiting" in log_of(stack, "participant-0")[len(waited) :],
        60,
        "the participant to say it waits for the registry",
    )
    registry.start()
    stack.wait_committed(180)


def state_line(stack, name, pattern, after=0, timeout_s=120):
    """Wait until role `name` logs a line matching `pattern` past character `after` of its log; the match."""
    found = []
    wait_for(
        lambda: found.append(re.search(pattern, log_of(stack, name)[after:], re.M)) or found[-1],
        timeout_s,
        f"{name} to log {pattern!r}",
        poll_s=0.05,
    )
    return found[-1]


def finish(stack, timeout_s=120):
    """Let the stack commit everything, stop it, and return the verdict (asserting it is clean)."""
    stack.wait_committed(timeout_s)
    return judged(stack)


def judged(stack):
    """Stop the stack's roles and return its whole verdict (`LocalStack.verify`: exactly once, every good record as
    produced, every record broken on purpose in the dead-letter topic once), asserting it is clean."""
    from hudi_kafka_nb.dev.verdict import verdict, verdict_ok

    stack.stop_roles()
    try:
        report = stack.verify()
    finally:
        stack.stop()
    assert verdict_ok(report), verdict(report)
    return report


def scrape(port: int) -> dict:
    "A role's Prometheus metrics at 127.0.0.1:`port` (`metrics.read_metrics`)."
    from hudi_kafka_nb.run.metrics import read_metrics

    return read_metrics(f"http://127.0.0.1:{port}/metrics")


def connections_to(port: int, processes) -> int:
    """TCP connections to `port` on this machine held by `processes` (psutil's; a role's `RoleProcess.tree()`: its JVM
    is a child of its Python), in any state: a connection the server closed stays the client's until the client closes
    it."""
    import psutil

    held = 0
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            held += sum(1 for c in process.net_connections("tcp") if c.raddr and c.raddr.port == port)
    return held


# Phases of coordinator failover that one stack lives through in turn (tests/test_failures.py on a local table,
# tests/test_object_store.py on S3): each starts from the state the last one left, the producer running throughout.


def commit_epochs_in_completion_order(table_path):
    """The epoch of each commit of ours, in the order Hudi completed them (commit_log orders them by epoch)."""
    return [c["epoch"] for c in sorted(commit_log(table_path), key=lambda c: c["completed"])]


def two_coordinators_at_once(stack, timeout_s=120):
    """`coordinator` and `coordinator-b` were started together: the later epoch claim wins, the other steps down
    whatever it was doing, and the winner commits on. The winner's name and epoch."""
    pair = ("coordinator", "coordinator-b")
    wait_for(lambda: not all(stack.roles[c].running() for c in pair), timeout_s, "one coordinator to step down")
    (loser,) = [c for c in pair if not stack.roles[c].running()]
    (winner,) = set(pair) - {loser}
    assert "steps down" in log_of(stack, loser) and "steps down" not in log_of(stack, winner)
    # the loser may notice the winner's epoch while the winner is still taking over
    winner_epoch = int(state_line(stack, winner, r"state=RECOVERED epoch=(\d+)")[1])
    # absent if it was fenced while taking over
    loser_epoch = re.search(r"state=RECOVERED epoch=(\d+)", log_of(stack, loser))
    assert loser_epoch is None or int(loser_epoch[1]) < winner_epoch
    state_line(stack, winner, r"committed=\d+ records=[1-9]", timeout_s=timeout_s)
    return winner, winner_epoch


def zombie_replaced(stack, coordinator, epoch, successor="coordinator-c", timeout_s=120):
    """`coordinator` (of `epoch`) paused inside an instant (SIGSTOP: slow, not dead), `successor` started, takes over
    and commits; the paused one resumed steps down without committing again. The successor's epoch."""
    mark = len(log_of(stack, coordinator))
    state_line(stack, coordinator, r"state=WRITING instant=", after=mark)
    zombie = stack.roles[coordinator]
    os.kill(zombie.process.pid, signal.SIGSTOP)
    try:
        stack.restart(successor)
        state_line(stack, successor, r"committed=\d+ records=[1-9]", timeout_s=timeout_s)
    finally:
        os.kill(zombie.process.pid, signal.SIGCONT)
    wait_for(lambda: not zombie.running(), 60, "the zombie to step down")
    assert "steps down" in log_of(stack, coordinator)[mark:]
    successor_epoch = int(state_line(stack, successor, r"state=RECOVERED epoch=(\d+)")[1])
    assert successor_epoch > epoch
    return successor_epoch


def participant_lost_and_back(stack, coordinator, timeout_s=120):
    """`participant-1` killed: its partitions move to `participant-0`; restarted: they come back."""
    mark = len(log_of(stack, coordinator))
    stack.kill("participant-1")
    state_line(
        stack,
        coordinator,
        r"state=WRITING instant=\d+ epoch=\d+ participants=participant-0$",
        after=mark,
        timeout_s=timeout_s,
    )
    stack.restart("participant-1")
    state_line(stack, coordinator, r"participants=participant-0,participant-1$", after=mark, timeout_s=timeout_s)


def free_ports(count: int) -> int:
    "The first of `count` consecutive TCP ports nothing listens on right now (a sink's roles take a run of them)."
    import socket

    while True:
        with contextlib.ExitStack() as held:
            sockets = [held.enter_context(socket.socket()) for _ in range(count)]
            try:
                sockets[0].bind(("0.0.0.0", 0))
                first = sockets[0].getsockname()[1]
                for offset, s in enumerate(sockets[1:], start=1):
                    s.bind(("0.0.0.0", first + offset))
            except OSError:
                continue
            return first
