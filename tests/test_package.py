"""The sink apart from its harness: `hudi_kafka_nb` without `hudi_kafka_nb.dev` (the embedded servers, the chaos
harness, the demo, the test doubles) imports and runs its roles, as a Databricks job does with the wheel; and the wheel
holds it alone."""

import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from hudi_kafka_nb.dev.servers import patient

ROOT = Path(__file__).resolve().parents[1]

BLOCKED_HARNESS = """
import importlib.abc, sys
class NoHarness(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "hudi_kafka_nb.dev" or name.startswith("hudi_kafka_nb.dev."):
            raise ImportError(f"{name} is the harness's, not the sink's")
sys.meta_path.insert(0, NoHarness())
"""

ROLES_IN_MEMORY = """
import msgspec
from hudi_kafka_nb.formats import avro, changes
from hudi_kafka_nb.kafka import broker_view, control, dead_letters, preflight, shared_source, source
from hudi_kafka_nb.protocol import coordinator, participant, table_services
from hudi_kafka_nb.run import runtime
from hudi_kafka_nb.table import committer, fencing, hudi, reading, writer
from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.core.messages import Heartbeat, StartCommit, decode_event, encode_event
from hudi_kafka_nb.protocol.participant import Participant, ParticipantState
from hudi_kafka_nb.core.kafka_records import RawRecord

class Bus:                     # a control channel of the test's own: the harness's InMemoryChannel is out of reach
    def __init__(self, events, sender): self.events, self.sender, self.seen = events, sender, 0
    def send(self, event): self.events.append(encode_event(msgspec.structs.replace(event, sender=self.sender)))
    def receive(self, timeout_s=0.0, max_events=500):
        new, self.seen = self.events[self.seen:], len(self.events)
        return [decode_event(e) for e in new]
    def close(self): pass
class Source:
    def assign(self, starts): self.starts = starts
    def unassign(self): pass
    def read(self, n, timeout_s=0): return [RawRecord("t", 0, 0, 0, None, b'{"order_id": "o1"}')]
    def positions(self, partitions): return {}
    def pause(self, partitions): pass
    def resume(self, partitions): pass
    def commit(self, offsets): pass
    def close(self): pass
class Letters:
    def lettered(self, partitions, timeout_s): return {}
    def deliver(self, letters, ends, timeout_s): return 0
    def close(self): pass
class Writer:
    version = "1.2.0"
    def is_inflight(self, instant): return True
    def use_value_schema(self, schema): pass

config = load_config(
    bootstrap_servers="x:1", topics="t", table_path="/t", table_name="t",
    value_schema={"order_id": "string", "amount": "double"},
)
events = []
sink = Participant(config, Bus(events, "p1"), Source(), Letters(), Writer(), clock=lambda: 0.0, participant_id="p1")
assignments = {"p1": [{"topic": "t", "partition": 0, "offset": 0}]}
Bus(events, "c").send(StartCommit(epoch=1, instant="001", assignments=assignments))
sink.step(); sink.step()
assert sink.state is ParticipantState.WRITING and sink.current.buffered == 1, (sink.state, sink.current)
print("the sink runs without its harness")
"""


def test_the_sink_imports_and_runs_its_roles_without_the_harness():
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_HARNESS + ROLES_IN_MEMORY], capture_output=True, text=True, timeout=patient(120)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the sink runs without its harness" in done.stdout


def test_the_harness_is_out_of_reach_in_that_test():
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_HARNESS + "import hudi_kafka_nb.dev.servers"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "is the harness's, not the sink's" in done.stderr


def build_wheel(folder):
    """The wheel `make wheel` builds, built into `folder` (setuptools' scratch folder emptied first: it keeps what it
    copied before)."""
    import shutil

    shutil.rmtree(ROOT / "build", ignore_errors=True)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(folder), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = folder.glob("hudi_kafka_nb-*.whl")
    return wheel


def test_the_wheel_holds_the_sink_alone_and_its_command_runs_a_role(broker, sink_params, tmp_path):
    """The wheel holds the sink and nothing of the stack that tries it (`hudi_kafka_nb.dev`), and requires only what the
    sink imports. Installed into a fresh virtual environment with its requirements and the `local` extra's Spark, its
    `hudi-kafka-nb` offers `run` and `role` (the demo is the clone's) and, outside the clone and with no folder of jars
    named, runs a coordinator against the test broker: its own jars from the wheel, Hudi's by Maven coordinates."""
    import zipfile

    wheel = build_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = archive.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "hudi_kafka_nb/run/runtime.py" in names and not [n for n in names if n.startswith("hudi_kafka_nb/dev/")]
    assert {
        "hudi_kafka_nb/jars/hudi-fixes/hudi-fixes.jar",
        "hudi_kafka_nb/jars/hudi-kafka-nb/hudi-kafka-nb.jar",
    } <= set(names)
    with zipfile.ZipFile(wheel) as archive:  # nbdev's index of names: only what the wheel holds
        index = archive.read("hudi_kafka_nb/_modidx.py").decode()
    assert "hudi_kafka_nb.run.runtime" in index and "hudi_kafka_nb.dev" not in index
    required = [
        line.split(":", 1)[1].strip()
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert not [
        r
        for r in required
        if r.split(">")[0].split("<")[0].split("[")[0] in ("tqdm", "psutil", "papermill", "ipykernel", "pyspark")
    ], required
    assert "hudi-kafka-nb = hudi_kafka_nb.run.supervisor:main" in entry_points

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=patient(120))
    installed = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--no-compile", f"{wheel}[local]"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    command = str(venv / "bin" / "hudi-kafka-nb")
    usage = subprocess.run([command, "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "{run,role}" in usage and "demo" not in usage, usage

    settings, stop = tmp_path / "sink.yaml", tmp_path / "coordinator.stop"
    settings.write_text(yaml.safe_dump({**sink_params, "min_participants": 1}))
    # outside the clone, no folder of jars named: the sink's own jars from the wheel, Hudi's by their coordinates
    # through Spark's repositories (the local Maven repository `make setup` filled, then Central)
    alone = {k: v for k, v in os.environ.items() if not (k.startswith("HUDI_KAFKA_NB_") and k.endswith("_JARS"))}
    with open(tmp_path / "coordinator.log", "wb") as log:  # the role keeps its own copy of the descriptor
        role = subprocess.Popen(
            [command, "role", "coordinator", str(settings), "--role-id", "coordinator", "--stop-file", str(stop)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
            env=alone,
        )
    try:
        deadline = time.monotonic() + patient(180)
        while "state=WAITING" not in (tmp_path / "coordinator.log").read_text(errors="replace"):
            assert role.poll() is None and time.monotonic() < deadline, (tmp_path / "coordinator.log").read_text(
                errors="replace"
            )[-3000:]
            time.sleep(0.5)
        stop.touch()
        assert role.wait(120) == 0, (tmp_path / "coordinator.log").read_text(errors="replace")[-3000:]
    finally:
        if role.poll() is None:
            role.kill()
    said = (tmp_path / "coordinator.log").read_text(errors="replace")
    # Hudi's jars resolved by their coordinates (Spark's Ivy says so), none of the clone's folders used
    assert ":: resolving dependencies ::" in said and str(ROOT / ".jars") not in said, said[-3000:]
    assert "hudi_kafka_nb/dev" not in said
