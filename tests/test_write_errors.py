"""No error committed: an instant whose Hudi write statuses report records Hudi could not write is refused before its
decision (so no restart can roll it forward either), with the records named by the keys participants match them by.
And the writes into an instant that was rolled back stop when a participant cancels them."""

import threading

import pytest

from hudi_kafka_nb.core.kafka_records import RawRecord
from hudi_kafka_nb.core.messages import Checkpoint, FailedRecord, PartitionProgress
from hudi_kafka_nb.core.ports import RecordsFailed
from hudi_kafka_nb.formats.records import decode_records
from hudi_kafka_nb.protocol.delivery import hudi_keys
from hudi_kafka_nb.table.committer import HudiCommitter
from hudi_kafka_nb.table.fenced_table import FencedTable
from hudi_kafka_nb.table.hudi import HudiJava
from hudi_kafka_nb.table.leftovers import decision_in_flight
from hudi_kafka_nb.table.reading import read_snapshot
from hudi_kafka_nb.table.timeline import completed_commits
from hudi_kafka_nb.table.writer import HudiWriter

from helpers import order_ids_config, wait_for


def test_an_instant_whose_write_statuses_report_failed_records_is_rolled_back_not_committed(tmp_path, spark):
    config = order_ids_config(tmp_path / "t")
    hudi = HudiJava(spark, config)
    table, writer, serialization = (
        FencedTable(config.table_path, HudiCommitter(hudi)),
        HudiWriter(hudi),
        hudi.H.common.util.SerializationUtils,
    )
    table.take_over("c")
    records = [RawRecord("orders", 0, i, 0, None, b'{"order_id": "o%d"}' % i) for i in range(3)]
    rows, _ = decode_records(records, config)
    checkpoint = Checkpoint(epoch=table.epoch, coordinator_id="c", partitions=[PartitionProgress("orders", 0, 0, 3, 3)])

    # Hudi's own write status of a file that failed one record, as its writers report one, beside the real write's
    instant = table.start_instant()
    written = writer.write(rows, instant)
    key = hudi_keys(rows, config)[2]
    failed = hudi.H.client.WriteStatus(False, 1.0)
    failed.markFailure(key, "", hudi.jvm.java.lang.IllegalArgumentException("cannot convert the value of amount"))
    statuses = serialization.deserialize(bytearray(written.statuses))
    statuses.add(failed)
    with pytest.raises(RecordsFailed) as refused:
        table.commit(instant, checkpoint, [bytes(serialization.serialize(statuses))], "c")
    assert refused.value.total == 1 and refused.value.failed == [
        FailedRecord(key, "", "java.lang.IllegalArgumentException: cannot convert the value of amount")
    ]
    assert "never committed" in str(refused.value) and decision_in_flight(config.table_path) is None
    table.rollback(instant)
    assert completed_commits(config.table_path) == [] and read_snapshot(config.table_path, ["order_id"]).num_rows == 0

    # the participants' keys are Hudi's: the same rows committed carry them as their record keys
    instant = table.start_instant()
    table.commit(instant, checkpoint, [writer.write(rows, instant).statuses], "c")
    stored = read_snapshot(config.table_path, ["_hoodie_record_key"])["_hoodie_record_key"].to_pylist()
    assert sorted(stored) == sorted(hudi_keys(rows, config))
    table.close()


def test_cancelling_a_rolled_back_instants_writes_stops_them_and_no_others(tmp_path, spark):
    """A participant cancels Spark's jobs still writing into an instant the coordinator rolled back, so that the next
    instant's write does not queue behind them (`protocol.background_writes`): those jobs stop, another instant's run
    on. Jobs that count for days stand in for Hudi's writes, which a test cannot make last long enough on purpose."""
    config = order_ids_config(tmp_path / "t")
    writer, context = HudiWriter(HudiJava(spark, config)), spark.sparkContext
    ended: dict[str, str] = {}

    def write_forever(instant: str):
        context.setJobGroup(writer.job_group(instant), f"instant {instant}")
        try:
            spark.range(0, 1 << 50, 1, 1).selectExpr("sum(id)").collect()  # days of counting, in one task
            ended[instant] = "finished"
        except Exception as e:
            ended[instant] = type(e).__name__ + ": " + str(e)[:200]

    writes = {i: threading.Thread(target=write_forever, args=(i,), daemon=True) for i in ("001", "002")}
    for thread in writes.values():
        thread.start()
    tracker = context.statusTracker()
    wait_for(lambda: all(tracker.getJobIdsForGroup(writer.job_group(i)) for i in writes), 120, "Spark's two jobs")

    writer.cancel_writes("001")
    writes["001"].join(120)
    assert "cancelled" in ended.get("001", "still running"), ended
    assert writes["002"].is_alive() and "002" not in ended
    writer.cancel_writes("002")
    writes["002"].join(120)
    assert "cancelled" in ended.get("002", "still running"), ended
