"""The soak: one sink under the supervisor for an hour (`--seconds`), its roles, the broker, the S3 server and Spark
workers killed at random (at least `--kills` in all), then the table judged (`hudi_kafka_nb/dev/soak.py`)."""

import argparse
import logging
import signal
import time
from pathlib import Path

from hudi_kafka_nb.dev.soak_run import print_soak, run_soak

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--seconds", type=float, default=3600)
parser.add_argument("--kills", type=int, default=500, help="at least this many kills, the hour extended if need be")
parser.add_argument("--kill-every", type=float, nargs=2, default=(2.0, 10.0), metavar=("MIN_S", "MAX_S"))
parser.add_argument(
    "--rate", type=float, default=None, help="records/s (default: half the rate the stack drains, measured first)"
)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--workdir", default=None, help="default: runs/soak-<time>")
args = parser.parse_args()


def interrupted(*_):
    # SIGTERM stops the soak as Ctrl-C does: the servers and roles it started are stopped on the way out
    raise KeyboardInterrupt


signal.signal(signal.SIGTERM, interrupted)
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
workdir = Path(args.workdir or f"runs/soak-{time.strftime('%Y%m%d-%H%M%S')}")
report = run_soak(
    workdir,
    seconds=args.seconds,
    min_kills=args.kills,
    seed=args.seed,
    kill_every_s=tuple(args.kill_every),
    rate=args.rate,
)
print_soak(report)
print(f"{'work folder':>28}: {workdir} (the report: soak-report.json)")
raise SystemExit(0 if report["ok"] else 1)
