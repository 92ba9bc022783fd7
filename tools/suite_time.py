"""Where a test run's time goes: role start-ups (Python and papermill) against the time roles run, from the logs a run
leaves.

python tools/suite_time.py [runs/tests] [--junit runs/tests.xml] [--per-test]

`make test-pytest` leaves its test folders in `runs/tests` and pytest's report in `runs/tests.xml`. Every role a test
starts (`RoleProcess`) logs a `launching` line, then `starts with settings` once its imports (or papermill's kernel) are
done, then its first state line once its Spark, Hudi table and Kafka clients are up. From those this prints: - role
starts, by kind, and the seconds from launch to the settings line (Python, papermill and the kernel) and from there to
the first state line (Spark's JVM, Hudi's classes, the table, the broker); - the tests' seconds in all, and how many of
them passed waiting for a test's first roles to be ready; - with `--per-test`, those figures for each test that starts
roles. Servers (brokers, MinIO, Spark clusters) are counted by the folders they leave."""

from __future__ import annotations

import argparse
import datetime
import re
import statistics
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
READY = re.compile(r" state=(RECOVERED|IDLE|STARTED)\b| steps down at start")


def _time(text: str) -> float:
    return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def role_starts(log: Path) -> list[dict]:
    "Every start of the role logging to `log`: launched, settings (imports done), ready (first state line), kind."
    starts, current = [], None
    for line in log.read_text(errors="replace").splitlines():
        if not (m := STAMP.match(line)):
            continue
        at = _time(m[1])
        if " launching " in line:
            current = {"launched": at, "kind": "papermill" if "(papermill)" in line else "python"}
            starts.append(current)
        elif " starts with settings " in line:
            if current is None or "settings" in current:  # a log written before roles logged their launch
                current = {"launched": None, "kind": "unknown"}
                starts.append(current)
            current["settings"] = at
        elif current is not None and "ready" not in current and READY.search(line):
            current["ready"] = at
    return starts


def test_of(log: Path, basetemp: Path) -> str:
    "The test folder a log lies in (pytest names it after the test), under the run and its xdist worker."
    parts = log.relative_to(basetemp).parts
    folder = parts[1] if parts[0].startswith("popen-gw") else parts[0]
    # pytest cuts names at 30, then numbers them
    return folder[:30].rstrip("0123456789") if len(folder) <= 30 else folder[:30]


def durations(path: Path) -> tuple[dict[str, float], int]:
    "Seconds (setup, call and teardown) by the folder name pytest gives a test, from its JUnit report; how many tests."
    found, cases = defaultdict(float), 0
    if not path.exists():
        return found, cases
    for case in ET.parse(path).iter("testcase"):
        found[re.sub(r"\W", "_", case.get("name"))[:30]] += float(case.get("time", 0))
        cases += 1
    return found, cases


def summary(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"{len(values)} starts, {sum(values):.0f} s in all, median {statistics.median(values):.1f} s, max "
        f"{max(values):.1f} s"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "basetemp",
        type=Path,
        nargs="?",
        default=Path("runs/tests"),
        help="the run's test folders (pytest's --basetemp)",
    )
    parser.add_argument(
        "--junit", type=Path, default=Path("runs/tests.xml"), help="pytest's JUnit report of the same run"
    )
    parser.add_argument("--per-test", action="store_true", help="a line for each test that starts roles")
    args = parser.parse_args()
    logs = [
        p for p in args.basetemp.rglob("*.log") if "data" not in p.parts and p.name not in ("broker.log", "minio.log")
    ]
    by_test, kinds = defaultdict(list), defaultdict(lambda: {"imports": [], "ready": []})
    for log in logs:
        for start in role_starts(log):
            start["role"] = log.stem
            by_test[test_of(log, args.basetemp)].append(start)
            if start.get("launched") and start.get("settings"):
                kinds[start["kind"]]["imports"].append(start["settings"] - start["launched"])
            if start.get("settings") and start.get("ready"):
                kinds[start["kind"]]["ready"].append(start["ready"] - start["settings"])
    print(f"run: {args.basetemp}")
    for kind, parts in sorted(kinds.items()):
        print(f"role starts ({kind}):")
        print(
            f"  launch → settings line (Python imports{', papermill and its kernel' if kind == 'papermill' else ''}): "
            f"{summary(parts['imports'])}"
        )
        print(f"  settings line → first state (Spark JVM, Hudi, table, broker):   {summary(parts['ready'])}")
    servers = {name: sum(1 for _ in args.basetemp.rglob(name)) for name in ("broker.log", "minio.log", "master.log")}
    print(
        f"server folders: {servers['broker.log']} brokers, {servers['minio.log']} MinIO, {servers['master.log']} Spark "
        "clusters"
    )
    walls, cases = durations(args.junit)
    rows = []
    for test, starts in by_test.items():
        first = min((s.get("launched") or s.get("settings")) for s in starts)
        # the roles the test starts together
        batch = [s for s in starts if (s.get("launched") or s.get("settings")) - first < 10]
        ready = [s["ready"] for s in batch if "ready" in s]
        wait = (max(ready) - first) if ready else 0.0
        rows.append((walls.get(test, 0.0), test, len(starts), wait))
    print(
        f"tests: {sum(walls.values()):.0f} s in all ({cases} tests); the {len(rows)} that start roles "
        f"{sum(r[0] for r in rows):.0f} s, {sum(r[3] for r in rows):.0f} s of which waiting for their first roles to "
        "be ready"
    )
    if not args.per_test:
        return
    print(f"\n{'test':32} {'wall s':>7} {'role starts':>11} {'first roles ready after s':>26}")
    for wall, test, count, wait in sorted(rows, reverse=True):
        print(f"{test[:32]:32} {wall:7.0f} {count:11} {wait:26.1f}")


if __name__ == "__main__":
    main()
