"""The table is shared: the sink streams into a table that other writers change too, under Hudi's own concurrency
control (docs/shared-tables.md)."""

import time

import pytest

from hudi_kafka_nb.dev.chaos import LocalStack
from hudi_kafka_nb.dev.content import expected_rows, json_values, read_produced
from hudi_kafka_nb.dev.s3 import EmbeddedS3
from hudi_kafka_nb.dev.users_jobs import (
    CORRECTION_JOB,
    ERASURE_JOB,
    OPTIMISTIC,
    SQL_UPDATE_JOB,
    TABLE_SERVICE_JOB,
    beside,
    printed,
    start_job,
    users_options,
)
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok
from hudi_kafka_nb.table.hudi_options import STORAGE_LOCK
from hudi_kafka_nb.table.reading import snapshot_rows
from hudi_kafka_nb.table.timeline import pending_instants, table_services_log

from helpers import order_event, wait_for

BUCKETS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}
# every writer of a table on S3 takes Hudi's storage-based lock, its lock object beside the timeline
STORAGE_LOCKED = {**OPTIMISTIC, "hoodie.write.lock.provider": STORAGE_LOCK}
NON_BLOCKING = {**OPTIMISTIC, **BUCKETS, "hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL"}


def sink_beside(tmp_path, broker, orders: int, concurrency: dict, **settings) -> LocalStack:
    "A sink of two participants upserting `orders` orders into a merge-on-read table, with these concurrency settings."
    hudi_options = {"hoodie.compact.inline.max.delta.commits": "3", **concurrency}
    return LocalStack(
        tmp_path / "stack", participants=2, broker=broker, orders=orders, hudi_options=hudi_options, **settings
    ).start()


@pytest.mark.slow
def test_a_users_erasures_and_sql_update_beside_the_sink_on_s3_under_hudis_storage_lock(tmp_path, broker):
    """Three to four minutes: the sink upserts orders into a copy-on-write table on S3 while the user's own Spark jobs
    erase retired orders from it in batches, archive others with an UPDATE through Hudi's SQL extension and cluster
    it, every writer under optimistic concurrency control with Hudi's storage-based lock (its S3 client in the sink's
    jar). The
    coordinator dies after a decision, and the store holding table and lock is away for 30 s. All writers commit, and
    the table is every order's latest event, the erased ones gone and the archived ones archived."""
    retired = [f"retired-{i:03d}" for i in range(90)]
    archived = [f"archived-{i:03d}" for i in range(40)]

    def expected(row: dict) -> dict | None:
        "Retired orders are erased after their last event, archived ones updated after it."
        if row["order_id"].startswith("retired-"):
            return None
        return {**row, "status": "ARCHIVED"} if row["order_id"].startswith("archived-") else row

    with EmbeddedS3(tmp_path / "s3") as s3:
        stack = sink_beside(
            tmp_path, broker, 1_000, STORAGE_LOCKED, s3=s3, table_type="COPY_ON_WRITE", expected_shape=expected
        )
        log = stack.workdir / "coordinator.log"
        users = users_options(STORAGE_LOCKED, "COPY_ON_WRITE")
        with beside(stack) as jobs:
            stack.send([order_event(i, prefix="retired-") for i in range(len(retired))])
            stack.send([order_event(i, prefix="archived-") for i in range(len(archived))])
            stack.produce(2_000)
            stack.wait_committed(180)
            stack.start_producing(300)
            batches = [retired[i : i + 30] for i in range(0, len(retired), 30)]
            erasure = start_job(ERASURE_JOB, stack.table_path, users, batches, 3.0, cwd=tmp_path)
            jobs.append(erasure)
            # meanwhile the coordinator dies after deciding a commit, before Hudi completes it: its successor completes
            # the decided commit beside the user's writes (its heartbeat, its conflict check)
            stack.roles["coordinator"].stop()
            stack.restart("coordinator", env={"HUDI_KAFKA_NB_CRASH_AT": "after_decision"})
            wait_for(lambda: not stack.roles["coordinator"].running(), 240, "the coordinator to crash after a decision")
            stack.restart("coordinator")
            assert len(printed(erasure)) == len(batches)
            # a job in SQL names the table in Spark's catalog as it is when it starts: one started while another job
            # turned on an index of the metadata table is refused by Hudi ("Config conflict")
            update = start_job(SQL_UPDATE_JOB, stack.table_path, users, "ARCHIVED", archived, cwd=tmp_path)
            jobs.append(update)
            assert printed(update) == [{"updated": len(archived)}]
            # the user's clustering job rewrites the file groups the sink keeps writing: a commit of the sink's while it
            # runs conflicts with it, and is written again
            clustering = start_job(TABLE_SERVICE_JOB, stack.table_path, users, "run_clustering", 1, 0.0, cwd=tmp_path)
            jobs.append(clustering)
            clustered = [instant for line in printed(clustering) for instant in line["instants"]]
            assert clustered, "the user's job clustered the table"
            # the store, and the lock in it, away for 30 s while the sink streams (SIGSTOP: connections taken, nothing
            # answered): the sink's requests and its lock wait, then go on
            s3.pause()
            time.sleep(30)
            s3.resume()
            stack.stop_producing()
            stack.wait_committed(240)
        report = stack.verify()
        assert verdict_ok(report), verdict(report)
        assert not pending_instants(stack.table_path), "no instant of any writer is left inflight"
        done = {s["instant"] for s in table_services_log(stack.table_path) if s["action"] == "clustering"}
        assert set(clustered) <= done, f"the user's clusterings {clustered} are completed: {done}"
    assert "rolled forward decided commit" in log.read_text() or "could not roll forward" in log.read_text()
    # the roles said they waited while the store was away
    said = "".join((stack.workdir / f"{role}.log").read_text() for role in stack.roles)
    assert "state=STILL_BUSY" in said or "state=STILL_WRITING" in said


@pytest.mark.slow
def test_two_writers_under_non_blocking_concurrency_keep_each_keys_latest_row(tmp_path, broker):
    """About two minutes alone, three or more under the suite's load: on a shared table each instant opens after the
    last commits and waits for the participants' bucket writes (5 to 10 s a cycle here), and the test needs commits
    before, during and after the user's job. The sink's participants upsert orders by bucket into a merge-on-read
    table while a user's Spark job upserts corrections into the same file groups, both under Hudi's non-blocking
    concurrency control, neither waiting for the other, and the user's own compaction job, a Spark application of its
    own, compacts the table the sink leaves uncompacted: each key ends with the row of the greatest ordering value,
    whichever writer wrote it."""
    # the sink hands compaction to the user's job
    stack = sink_beside(tmp_path, broker, 300, {**NON_BLOCKING, "hoodie.compact.inline": "false"})
    with beside(stack) as jobs:
        stack.produce(1_000)
        stack.wait_committed(180)
        stack.start_producing(200)
        # a later ordering value than any event's wins over the stream; an earlier one loses to it
        fixes = [
            ["corrected", "2099-01-01 00:00:00", [f"o{i:09d}" for i in range(0, 30)]],
            ["too-old", "2000-01-01 00:00:00", [f"o{i:09d}" for i in range(30, 60)]],
        ]
        job = start_job(CORRECTION_JOB, stack.table_path, users_options(NON_BLOCKING), fixes, cwd=tmp_path)
        jobs.append(job)
        # the keys each correction found in the table (an order the stream has not written yet is not corrected)
        corrected, too_old = [set(line["fixed"]) for line in printed(job)]
        assert len(corrected) > 20 and len(too_old) > 20, (corrected, too_old)
        compaction = start_job(
            TABLE_SERVICE_JOB, stack.table_path, users_options(NON_BLOCKING), "run_compaction", 2, 5.0, cwd=tmp_path
        )
        jobs.append(compaction)
        compacted = [instant for line in printed(compaction) for instant in line["instants"]]
        assert compacted, "the user's job compacted the table"
        stack.produce(1_000)
        stack.stop_producing()
        stack.wait_committed(180)
    latest = expected_rows(
        read_produced(stack.broker.bootstrap_servers, stack.ends), json_values, "order_id", "event_time"
    )
    rows = snapshot_rows(stack.table_path, ["order_id", "status"]).to_pylist()
    found = {row["order_id"]: row["status"] for row in rows}
    assert len(rows) == len(found) == len(latest), (len(rows), len(found), len(latest))
    wanted = {key: "corrected" if key in corrected else row["status"] for (key,), row in latest.items()}
    assert found == wanted, {k: (found.get(k), v) for k, v in wanted.items() if found.get(k) != v}
    assert not pending_instants(stack.table_path)
    completed = {s["instant"] for s in table_services_log(stack.table_path) if s["action"] == "compaction"}
    assert set(compacted) <= completed, f"the user's compactions {compacted} are completed: {completed}"
