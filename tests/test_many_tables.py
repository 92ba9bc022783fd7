"""Many topics into many tables with one sink (nbs/13_routing, nbs/65_table_host): a coordinator and two
participants, each one process for every table, on the real broker."""

import re
import time
import uuid
from datetime import datetime

import msgspec
import pytest

from hudi_kafka_nb.dev.broker import create_topic
from hudi_kafka_nb.dev.chaos import LocalStack, protocol_log_tail
from hudi_kafka_nb.dev.producers import UPSERT_SETTINGS, produce_orders, send_events
from hudi_kafka_nb.dev.servers import patient
from hudi_kafka_nb.dev.source_table import CDC_SETTINGS, SourceTable, compare_mirror, mirror_ok
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok, verify_stream
from hudi_kafka_nb.table.reading import coordinates, produced_coordinates, read_snapshot
from hudi_kafka_nb.table.timeline import commit_log, has_committed

from helpers import wait_for

HOT_BATCH, HOT_FIRST, QUIET_FIRST, RESTING_FIRST = 50, 1_000_000, 2_000_000, 3_000_000  # apart from the first phases'


def hudi_time() -> str:
    "Now as Hudi's timeline writes its times (local time, to the millisecond), to compare with completion times."
    return datetime.now().strftime("%Y%m%d%H%M%S%f")[:17]


def committed_at(table, ends: dict[tuple[str, int], int]) -> str:
    "When the first commit of `table` that holds every partition up to `ends` completed."
    for commit in commit_log(table):
        if all(commit["offsets"].get(f"{t}[{p}]", (0, 0))[1] >= end for (t, p), end in ends.items()):
            return commit["completed"]
    raise AssertionError(f"{table}: no commit holds {ends}")


# twelve tables' recovery after the crash, then phase after phase on one stack: 700 to 950 s under four busy workers on
# two cores, where pytest's 900 s cut one off while its hot tables still committed (its own waits catch a hang)
@pytest.mark.timeout(1500)
def test_one_sink_mirrors_a_database_and_more_a_table_per_topic_exactly_once_through_kills(broker, tmp_path):
    """Ten topics into twelve tables with settings of their own: orders appended into a partitioned table, orders
    upserted by key (copy-on-write), one topic's orders split between two tables by region, events into a table for each
    value of their kind, a database table's change events mirrored into a merge-on-read table, and small tables of other
    shapes (hive-style partitions, unpartitioned, keyed merge-on-read and copy-on-write). The coordinator dies as the
    first of its tables decides a commit (the others before or after theirs), then a participant and the broker are
    killed mid-stream, and the source database gains a table (its topic created while the sink runs), which the sink
    mirrors too. Then two tables stream while two quiet ones of their kinds get a change now and then, and each quiet
    change must be committed before its streaming peer runs three whole instants: quiet tables are not starved. Two
    tables idle since then park (their roles stop), start parked in a participant restarted meanwhile, and wake for
    their next records. Each table is judged on its own. About two minutes here, six on a loaded CI machine (the quiet
    tables' phase a quarter of a minute and a minute): twelve tables' first instants on one stack (one test for every
    shape, not a stack each)."""
    stack = LocalStack(tmp_path / "stack", participants=2, broker=broker)
    prefix, suffix, root = f"shop{uuid.uuid4().hex[:6]}", uuid.uuid4().hex[:6], stack.workdir / "tables"
    stack.params.update(
        topics="",
        topics_regex=re.escape(prefix) + r"\.public\..*",
        table_name="{table}",
        table_path=str(root / "{table_name}"),
        control_topic=f"control-{suffix}-{{table_name}}",
        dead_letter_topic=f"dead-{suffix}-{{table_name}}",
        topic_refresh_s=2.0,
        tables={
            "keyed": {**UPSERT_SETTINGS, "table_type": "COPY_ON_WRITE", "hudi_options": {}},
            "customers": CDC_SETTINGS,
            "suppliers": CDC_SETTINGS,
            # one more topic, split by a field of its records between two tables
            **{
                name: {"topics": f"{prefix}-web", "route_field": "region", "route_regex": regex}
                for name, regex in (("web_eu", "eu-.*"), ("web_rest", "us-.*|ap-.*"))
            },
            # and small tables of every other shape: unpartitioned, hive-style, keyed merge-on-read
            # and copy-on-write
            "s0": {"hive_style_partitioning": True},
            # these two park when idle for 5 s (their roles stop), and wake for their next records
            "s1": {"partition_field": "", "park_idle_table_s": 5},
            "s3": {**UPSERT_SETTINGS, "park_idle_table_s": 5},
            "s4": {**UPSERT_SETTINGS, "table_type": "COPY_ON_WRITE", "hudi_options": {}, "partition_field": ""},
            # and a family: a table for each value of a field, made as the values appear
            "events_{route}": {
                "topics": f"{prefix}-events",
                "route_field": "kind",
                "partition_field": "",
                "value_schema": {"id": "string", "kind": "string"},
            },
        },
    )
    small = ["s0", "s1", "s3", "s4"]
    partitions = {
        "orders": 4,
        "keyed": 2,
        "customers": 2,
        "suppliers": 2,
        "web": 2,
        "events": 1,
        **dict.fromkeys(small, 1),
    }
    topic = {name: f"{prefix}.public.{name}" for name in partitions} | {
        "web": f"{prefix}-web",
        "events": f"{prefix}-events",
    }
    source_of = {name: name for name in partitions if name not in ("web", "events")} | {
        "web_eu": "web",
        "web_rest": "web",
        "events_click": "events",
        "events_view": "events",
    }
    sources = {name: SourceTable(seed=i, table=name) for i, name in enumerate(("customers", "suppliers"))}
    ends: dict = {}

    def produce(name, count, first=0):
        if name in sources:
            source = sources[name]
            ends.update(
                send_events(
                    broker.bootstrap_servers,
                    topic[name],
                    (source.snapshot(count // 4) if not source.rows else []) + source.changes(count),
                )
            )
        elif name == "events":  # two kinds, one of them in two spellings: a table each
            kinds = [("click", "view", "VIEW")[i % 3] for i in range(count)]
            ends.update(
                send_events(
                    broker.bootstrap_servers,
                    topic[name],
                    [(None, msgspec.json.encode({"id": f"e{first + i}", "kind": k})) for i, k in enumerate(kinds)],
                )
            )
        else:
            ends.update(
                produce_orders(broker.bootstrap_servers, topic[name], count, first=first, progress=False, quiet=True)
            )

    def ends_of(name):
        return {tp: end for tp, end in ends.items() if tp[0] == topic[source_of.get(name, name)]}

    def wait_all(names, timeout_s=180):
        deadline = time.monotonic() + patient(timeout_s)
        while not all(has_committed(root / name, ends_of(name)) for name in names):
            assert time.monotonic() < deadline, (
                f"not all of {names} committed; the coordinator's last "
                f"lines:\n{protocol_log_tail(stack.workdir / 'coordinator.log')}"
            )
            time.sleep(0.5)

    hot, quiet, resting, hot_orders, quiet_changes = ["orders", "keyed"], ["s0", "s4"], ["s1", "s3"], 0, []
    peer_of = {"s0": "orders", "s4": "keyed"}  # appended and partitioned; upserted into copy-on-write
    first_topics = ["orders", "keyed", "customers", "web", "events", *small]
    for name in first_topics:
        create_topic(broker.bootstrap_servers, topic[name], partitions[name])
    # the coordinator starts to die at its first decision: its other tables are then anywhere in their first instants,
    # some before their decision, some after (a crash between two tables' commits)
    stack.role_env = {"HUDI_KAFKA_NB_CRASH_AT": "after_decision"}
    stack.start()
    stack.role_env = {}
    try:
        for i, name in enumerate(first_topics):
            produce(name, 150 if name in small or name == "events" else 500, first=i * 100_000)
        wait_for(lambda: not stack.roles["coordinator"].running(), 120, "the coordinator to reach its crash point", 0.2)
        for i, name in enumerate(first_topics):
            produce(name, 150 if name in small or name == "events" else 500, first=i * 100_000 + 500)
        stack.kill("participant-0")
        broker.kill()  # SIGKILL, both
        time.sleep(1)
        broker.start()  # same log directory, same ports
        create_topic(broker.bootstrap_servers, topic["suppliers"], partitions["suppliers"])
        produce("suppliers", 400)
        stack.restart("coordinator")
        stack.restart("participant-0")
        produce("customers", 400)
        # the successor first builds what the crash left half made (each table's metadata table, in one Spark for the
        # eleven, then their rollbacks): 80 s of it on a loaded machine before any table commits again
        wait_all([*source_of], timeout_s=300)
        # then hot tables stream while quiet ones get a change now and then, each waited for while the hot ones go on
        for change in range(2):
            produced_at = hudi_time()
            for j, name in enumerate(quiet):
                produce(name, 1, first=QUIET_FIRST + 10 * change + j)
            quiet_changes.extend((name, produced_at, ends_of(name)) for name in quiet)
            deadline = time.monotonic() + patient(120)
            while not all(has_committed(root / name, ends_of(name)) for name in quiet):
                assert time.monotonic() < deadline, f"a quiet table's change never committed while {hot} streamed"
                for name in hot:
                    produce(name, HOT_BATCH, first=HOT_FIRST + hot_orders)
                hot_orders += HOT_BATCH
                time.sleep(0.5)
        wait_all(hot)

        # the tables idle since the first phases are parked, in the coordinator and the participant never restarted
        # (a participant started after its table parked keeps running: nobody tells it), and wake for new records
        def parked(name):
            return all(
                re.search(rf"id=\S+-{name} state=PARKED", (stack.workdir / f"{role}.log").read_text())
                for role in ("coordinator", "participant-1")
            )

        wait_for(lambda: parked("s1") and parked("s3"), 120, "the idle tables s1 and s3 to park", poll_s=1)
        # a participant started meanwhile opens neither: their latest commits hold all their topics hold
        stack.roles["participant-1"].stop()
        stack.restart("participant-1")
        log_1 = stack.workdir / "participant-1.log"
        wait_for(
            lambda: all(f"table {name} starts parked" in log_1.read_text() for name in resting),
            120,
            "participant-1 to start s1 and s3 parked",
            poll_s=1,
        )
        for name in resting:
            produce(name, 20, first=RESTING_FIRST)
        wait_all(resting, timeout_s=120)
    finally:
        stack.stop()
    # every table of orders: exactly once, each row as produced (the keyed ones each order's latest), no letter
    for name in ("orders", "keyed", *small):
        keyed = {"key_field": "order_id", "ordering": "event_time"} if name in ("keyed", "s3", "s4") else {}
        report = verify_stream(broker.bootstrap_servers, root / name, ends_of(name), f"dead-{suffix}-{name}", **keyed)
        assert verdict_ok(report) and report["rows_compared"] == report["in_table"], f"table {name}: {verdict(report)}"
    # every order once: each was produced once
    assert read_snapshot(root / "keyed", ["order_id"]).num_rows == 1_000 + hot_orders
    # never starved: while a quiet change waited, its streaming peer (a table of its kind) ran at most two whole
    # instants, opened after the change was produced and committed before it
    for name, produced_at, change_ends in quiet_changes:
        landed = committed_at(root / name, change_ends)
        peer = commit_log(root / peer_of[name])
        within = [
            (c["instant"], c["completed"]) for c in peer if produced_at < c["instant"] and c["completed"] < landed
        ]
        assert len(within) <= 2, f"{name}'s change of {produced_at} committed at {landed}, after {within}"
    for name, source in sources.items():
        check = compare_mirror(root / name, source.rows)
        assert mirror_ok(check), f"table {name}: {check}"
    # split by region: every record of the topic in exactly one of the two tables, each table's rows of its regions
    eu, rest = coordinates(root / "web_eu"), coordinates(root / "web_rest")
    assert eu | rest == produced_coordinates(ends_of("web")) and not eu & rest
    for name, prefixes in (("web_eu", ("eu-",)), ("web_rest", ("us-", "ap-"))):
        rows = read_snapshot(root / name, ["region"])
        assert rows.num_rows == len(eu if name == "web_eu" else rest) and all(
            r.startswith(prefixes) for r in rows["region"].to_pylist()
        ), name
    # by the field's value: a table for each kind, the two spellings of one in one table, every record once
    clicks, views = coordinates(root / "events_click"), coordinates(root / "events_view")
    assert clicks | views == produced_coordinates(ends_of("events")) and not clicks & views
    assert {k.lower() for k in read_snapshot(root / "events_view", ["kind"])["kind"].to_pylist()} == {"view"}
    assert sorted(p.name for p in root.iterdir() if p.name.startswith("events")) == ["events_click", "events_view"]
