"""The sink apart from its harness: `hudi_kafka_nb` without `hudi_kafka_nb.dev` (the embedded servers, the chaos harness,
the demo, the test doubles) imports and runs its roles, as a Databricks job does with the wheel."""
import subprocess, sys

BLOCKED_HARNESS = '''
import importlib.abc, sys
class NoHarness(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "hudi_kafka_nb.dev" or name.startswith("hudi_kafka_nb.dev."): raise ImportError(f"{name} is the harness's, not the sink's")
sys.meta_path.insert(0, NoHarness())
'''

ROLES_IN_MEMORY = '''
import msgspec
from hudi_kafka_nb import avro, changes, committer, coordinator, fencing, hudi, kafka, participant, preflight, reading, runtime, table_services, writer
from hudi_kafka_nb.config import DEMO_VALUE_SCHEMA, load_config
from hudi_kafka_nb.messages import Heartbeat, StartCommit, decode_event, encode_event
from hudi_kafka_nb.participant import Participant, ParticipantState
from hudi_kafka_nb.records import RawRecord

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

config = load_config(bootstrap_servers="x:1", topics="t", table_path="/t", table_name="t", value_schema=DEMO_VALUE_SCHEMA)
events = []
sink = Participant(config, Bus(events, "p1"), Source(), Letters(), Writer(), clock=lambda: 0.0, participant_id="p1")
Bus(events, "c").send(StartCommit(epoch=1, instant="001", assignments={"p1": [{"topic": "t", "partition": 0, "offset": 0}]}))
sink.step(); sink.step()
assert sink.state is ParticipantState.WRITING and sink.current.buffered == 1, (sink.state, sink.current)
print("the sink runs without its harness")
'''


def test_the_sink_imports_and_runs_its_roles_without_the_harness():
    done = subprocess.run([sys.executable, "-c", BLOCKED_HARNESS + ROLES_IN_MEMORY], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the sink runs without its harness" in done.stdout


def test_the_harness_is_out_of_reach_in_that_test():
    done = subprocess.run([sys.executable, "-c", BLOCKED_HARNESS + "import hudi_kafka_nb.dev.servers"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "is the harness's, not the sink's" in done.stderr
