"""The happy path end to end: coordinator and two participants as papermill jobs, 8 partitions, several commits."""

from pathlib import Path

import nbformat
import pytest

from hudi_kafka_nb.dev.demo import wait_until_committed, wait_until_ingesting
from hudi_kafka_nb.dev.producers import produce_orders
from hudi_kafka_nb.dev.roles import RoleProcess, participant_roles
from hudi_kafka_nb.dev.servers import free_port
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok, verify_stream
from hudi_kafka_nb.formats.letters import letter_source
from hudi_kafka_nb.table.reading import commit_history, coordinate_check, coordinates, coordinator_status
from hudi_kafka_nb.table.timeline import commit_log

from helpers import assert_offsets_continue, produced_coordinates, read_dead_letters, scrape, wait_for


@pytest.mark.xdist_group("papermill")  # Jupyter kernels started at once by two workers can pick one port
def test_two_participants_exactly_once_through_papermill_jobs(broker, sink_params, tmp_path):
    workdir = tmp_path / "jobs"
    # a small memory budget: a participant's rows go into the open instant in several writes, reported as one
    sink_params = {**sink_params, "max_buffered_bytes": 65_536, "max_batch_records": 1_000}
    # each role serves its metrics
    ports = {name: free_port() for name in ("coordinator", "participant-0", "participant-1")}
    roles = [RoleProcess("coordinator", {**sink_params, "metrics_port": ports["coordinator"]}, workdir)]
    roles += participant_roles(sink_params, 2, workdir, each=lambda i: {"metrics_port": ports[f"participant-{i}"]})
    table_path = Path(sink_params["table_path"])
    try:
        for role in roles:
            role.start()
        wait_until_ingesting(table_path, roles)
        ends = {}
        for burst in range(3):  # three bursts, each longer apart than the commit interval
            burst_ends = produce_orders(
                broker.bootstrap_servers, sink_params["topics"], 6_000, bad_every=1_000, seed=burst, progress=False
            )
            ends.update(burst_ends)
            wait_until_committed(table_path, ends, roles, timeout_s=120)

        # what Prometheus reads from the running roles (run.metrics); lag once the status after the last commit is out
        def lag():
            return [v for (name, _), v in scrape(ports["coordinator"]).items() if name == "hudi_kafka_nb_consumer_lag"]

        wait_for(lambda: len(lag()) == len(ends) and not any(lag()), 30, "no lag in the coordinator's metrics")
        figures = {name: scrape(port) for name, port in ports.items()}
    finally:
        for role in roles:
            role.stop()

    produced = produced_coordinates(ends)
    letters = read_dead_letters(broker.bootstrap_servers, sink_params["dead_letter_topic"], expected=18)
    dead = {letter_source(h) for h, _ in letters}
    in_table = coordinates(table_path)
    assert len(letters) == 18 and len(dead) == 18
    assert in_table | dead == produced and not in_table & dead, "every record is in the table or dead-lettered, once"
    check = coordinate_check(table_path)
    assert check["duplicates"] == 0 and check["rows"] == len(produced) - 18
    assert len(commit_log(table_path)) >= 3
    assert assert_offsets_continue(table_path) == {f"{t}[{p}]": end for (t, p), end in ends.items()}
    assert all(h["hudi_kafka_nb.error.reason"] for h, _ in letters)
    # and each row as produced, each letter for a record broken on purpose, once
    report = verify_stream(broker.bootstrap_servers, table_path, ends, sink_params["dead_letter_topic"])
    assert verdict_ok(report) and report["rows_compared"] == check["rows"], verdict(report)
    assert any("written_early=" in role.log_path.read_text() for role in roles[1:]), (
        "rows past max_buffered_bytes were written early"
    )
    # the metrics say what the table says
    coordinator, participants = figures["coordinator"], [figures["participant-0"], figures["participant-1"]]
    commits = len(commit_log(table_path))
    assert coordinator[("hudi_kafka_nb_records_committed_total", ())] == check["rows"]
    assert coordinator[("hudi_kafka_nb_instants_ended_total", (("outcome", "committed"),))] == commits
    assert coordinator[("hudi_kafka_nb_commit_duration_seconds_count", ())] == commits
    assert coordinator[("hudi_kafka_nb_coordinator_epoch", ())] == 1
    assert (
        sum(
            v for p in participants for (name, _), v in p.items() if name == "hudi_kafka_nb_records_dead_lettered_total"
        )
        == 18
    )
    assert sum(p[("hudi_kafka_nb_records_written_total", ())] for p in participants) >= check["rows"]
    # what observers see: the coordinator's published status and a plottable commit history
    status = coordinator_status(table_path)
    assert status["state"] == "STOPPED" and status["last_committed_instant"] == commit_log(table_path)[-1]["instant"]
    assert set(status["partitions"]) == {f"{t}[{p}]" for t, p in ends} and all(
        "lag" in v for v in status["partitions"].values()
    )
    history = commit_history(table_path)
    assert history["total_records"].iloc[-1] == check["rows"] and history["committed_at"].is_monotonic_increasing
    # the executed role notebooks are kept, and ran without error
    for role in roles:
        notebook = nbformat.read(role.output, as_version=4)
        assert not [o for c in notebook.cells for o in c.get("outputs", []) if o.get("output_type") == "error"], (
            role.name
        )
