"""Helpers shared by the pytest suites."""
import re, time
from hudi_kafka_nb.kafka import read_dead_letters  # noqa: F401 (the suites import it from here)
from hudi_kafka_nb.reading import produced_coordinates  # noqa: F401 (the same)
from hudi_kafka_nb.timeline import commit_log


def assert_offsets_continue(table_path):
    """Invariant 2: each commit's start offsets are the previous commit's next offsets."""
    committed = {}
    for commit in commit_log(table_path):
        for tp, (start, end) in commit["offsets"].items():
            assert committed.get(tp, start) == start, f"{commit['instant']}: {tp} starts at {start}, previous ended at {committed.get(tp)}"
            committed[tp] = end
    return committed


def wait_for(condition, timeout_s=60, what="condition", poll_s=0.1):
    """Poll `condition` until it is true; TimeoutError naming `what` was awaited if `timeout_s` passes first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition(): return
        time.sleep(poll_s)
    raise TimeoutError(f"waited {timeout_s}s for {what}")


def log_of(stack, name):
    """The log of role `name` of a LocalStack so far."""
    return (stack.workdir / f"{name}.log").read_text(errors="replace")


def state_line(stack, name, pattern, after=0, timeout_s=120):
    """Wait until role `name` logs a line matching `pattern` past character `after` of its log; the match."""
    found = []
    wait_for(lambda: found.append(re.search(pattern, log_of(stack, name)[after:], re.M)) or found[-1], timeout_s,
             f"{name} to log {pattern!r}", poll_s=0.05)
    return found[-1]


def finish(stack, timeout_s=120):
    """Let the stack commit everything, stop it, and return the verdict (asserting it is clean)."""
    from hudi_kafka_nb.dev.chaos import verdict, verdict_ok, verify_table
    stack.wait_committed(timeout_s)
    stack.stop()
    report = verify_table(stack.table_path, stack.ends)
    assert verdict_ok(report), verdict(report)
    return report


def scrape(port: int) -> dict:
    "A role's Prometheus metrics at 127.0.0.1:`port` (`metrics.read_metrics`)."
    from hudi_kafka_nb.metrics import read_metrics
    return read_metrics(f"http://127.0.0.1:{port}/metrics")


def connections_to(port: int, processes) -> int:
    """TCP connections to `port` on this machine held by `processes` (psutil's; a role's `RoleProcess.tree()`: its JVM is
    a child of its Python), in any state: a connection the server closed stays the client's until the client closes it."""
    import psutil
    held = 0
    for process in processes:
        try: held += sum(1 for c in process.net_connections("tcp") if c.raddr and c.raddr.port == port)
        except psutil.NoSuchProcess: pass
    return held
