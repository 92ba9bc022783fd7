"""The long chaos run: `python scripts/chaos.py --kills 100` (the pytest suite runs a 10-kill one); `--tables N`: N
topics into N tables of one sink, each table judged on its own: exactly once, each row as produced, each order broken
on purpose in the dead-letter topic once; `--avro`: Avro orders through a schema registry, killed too, whose versions
add a field, retype one (dead-lettered) and promote one (the column widens)."""

import argparse
import contextlib
import logging
import tempfile
from pathlib import Path

from hudi_kafka_nb.dev.chaos_run import print_report, run_chaos

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--kills", type=int, default=100)
parser.add_argument("--participants", type=int, default=3)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument(
    "--tables", type=int, default=1, help="topics into tables of one sink (JSON orders spread over them)"
)
parser.add_argument(
    "--bad-every", type=int, default=1_000, help="every N-th order broken on purpose: its letter, once, is judged too"
)
parser.add_argument("--workdir", default=None, help="default: a new temporary folder")
parser.add_argument("--avro", action="store_true", help="Avro orders through a schema registry, killed too")
args = parser.parse_args()
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
workdir = args.workdir or tempfile.mkdtemp(prefix="hudi-kafka-nb-chaos-")
with contextlib.ExitStack() as servers:
    if args.avro:
        from hudi_kafka_nb.dev.registry import EmbeddedRegistry

        registry = servers.enter_context(EmbeddedRegistry(Path(workdir) / "registry"))
    report = run_chaos(
        workdir,
        kills=args.kills,
        participants=args.participants,
        seed=args.seed,
        drain_timeout_s=600,
        tables=args.tables,
        bad_every=args.bad_every,
        **({"registry": registry} if args.avro else {}),
    )
print_report(report)
print(f"{'work folder':>26}: {workdir}")
raise SystemExit(0 if report["ok"] else 1)
