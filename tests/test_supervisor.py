"""A sink run by `hudi-kafka-nb run` on this machine: the supervisor starts its roles again when they die."""

import os
import signal
import subprocess
import sys
import time

import msgspec
import yaml

from hudi_kafka_nb.dev.broker import create_topic
from hudi_kafka_nb.dev.chaos import LocalStack
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok
from hudi_kafka_nb.run.metrics import read_metrics
from hudi_kafka_nb.table.timeline import has_committed

from helpers import free_ports, wait_for

CLI = [sys.executable, "-c", "import sys; from hudi_kafka_nb.run.supervisor import main; main(sys.argv[1:])"]


def test_roles_killed_under_the_supervisor_come_back_and_the_table_stays_exact(broker, tmp_path):
    """About a minute: the coordinator and the participant of a sink run by `hudi-kafka-nb run` are SIGKILLed; the
    supervisor starts each again and the table holds every record once. A misspelt setting is refused before any role
    starts; one a role refuses as it starts stops it until the settings change; a second sink on the table is refused;
    Hudi's own metrics are on where the settings ask."""
    # its settings and producer only
    stack = LocalStack(tmp_path / "stack", participants=1, partitions=4, broker=broker)
    settings = tmp_path / "sink.yaml"
    settings.write_text(yaml.safe_dump({**stack.role_params(), "comit_interval_s": 1}))
    refused = subprocess.run(
        [*CLI, "run", str(settings), "--workdir", str(tmp_path / "refused")], capture_output=True, text=True, timeout=60
    )
    assert (
        refused.returncode != 0
        and "comit_interval_s" in refused.stderr
        and not (tmp_path / "refused" / "coordinator.log").exists()
    )

    # Hudi's own metrics where the user asks for them (hoodie.metrics.*, handed to Hudi as they are): its console
    # reporter prints the table's figures and the metadata table's commits into the coordinator's log (not the data
    # table's commits: Hudi times those in the client that wrote them, and here participants write what the coordinator
    # commits)
    metrics = {"hoodie.metrics.on": "true", "hoodie.metrics.reporter.type": "CONSOLE"}
    # first a lock provider Spark's classpath lacks: refused by each role as it starts (a ConfigError), and the roles
    # are not started into it again until the settings file changes
    no_such_lock = {**metrics, "hoodie.write.lock.provider": "com.example.NoSuchLockProvider"}
    settings.write_text(yaml.safe_dump({**stack.role_params(), "hudi_options": no_such_lock}))
    create_topic(broker.bootstrap_servers, stack.topic, stack.partitions)
    workdir = tmp_path / "sink"
    metrics_port = free_ports(3)  # the coordinator's, the participant's, and the supervisor's own after them
    with open(tmp_path / "supervisor.log", "wb") as log:  # the supervisor keeps its own copy of the descriptor
        supervisor = subprocess.Popen(
            [*CLI, "run", str(settings), "--workdir", str(workdir), "--metrics-port", str(metrics_port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def status():
        return (
            msgspec.json.decode((workdir / "supervisor.json").read_bytes())
            if (workdir / "supervisor.json").exists()
            else {}
        )

    try:
        wait_for(
            lambda: {r["state"] for r in status().get("roles", {}).values()} == {"refused_settings"},
            120,
            "each role to refuse its settings",
        )
        time.sleep(3)  # the supervisor's waits are a second or two: none is started again meanwhile
        roles = status()["roles"]
        assert all(r["starts"] == 1 and "NoSuchLockProvider" in r["last_exit"]["cause"] for r in roles.values()), roles
        # and its metrics say so, where an operator's alert reads them
        said = read_metrics(f"http://127.0.0.1:{metrics_port + 2}/metrics")
        assert said[("hudi_kafka_nb_role_state", (("state", "refused_settings"),))] == 1, said
        settings.write_text(yaml.safe_dump({**stack.role_params(), "hudi_options": metrics}))
        stack.produce(2_000)
        wait_for(lambda: has_committed(stack.table_path, stack.ends), 120, "the first records committed", poll_s=0.5)
        # a second sink pointed at the same table (its own control topic): refused as it starts, and the first goes on
        other = tmp_path / "other-sink.yaml"
        other.write_text(yaml.safe_dump({**stack.role_params(), "control_topic": f"{stack.topic}-other-control"}))
        second = subprocess.run([*CLI, "role", "coordinator", str(other)], capture_output=True, text=True, timeout=120)
        assert second.returncode == 78 and "written by another sink" in second.stderr, second.stderr[-3000:]
        for name in ("coordinator", "participant-0"):
            os.kill(status()["roles"][name]["pid"], signal.SIGKILL)
        stack.produce(2_000)
        wait_for(
            lambda: has_committed(stack.table_path, stack.ends),
            120,
            "the rest committed after the restarts",
            poll_s=0.5,
        )
        roles = status()["roles"]
        assert all(
            roles[name]["starts"] == 3 and roles[name]["last_exit"]["cause"] == "killed by SIGKILL"
            for name in ("coordinator", "participant-0")
        ), roles
    finally:
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(90) == 0
    assert all(role["state"] == "stopped" and role["pid"] is None for role in status()["roles"].values()), (
        "every role stopped"
    )
    hudi_figures = (workdir / "coordinator.log").read_text(errors="replace")
    assert (
        "orders.compaction.pendingCompactionInstantCount" in hudi_figures
        and "orders_metadata.deltacommit.totalRecordsWritten" in hudi_figures
    )
    assert {oct(log.stat().st_mode & 0o777) for log in workdir.glob("*.log")} == {"0o600"}, (
        "the roles' logs are their owner's only"
    )
    report = stack.verify()
    assert verdict_ok(report), verdict(report)
