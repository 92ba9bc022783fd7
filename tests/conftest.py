"""Shared fixtures: one embedded Apache Kafka broker per test session, on 127.0.0.1, and fresh topics per test."""

import contextlib
import os
import uuid

import psutil
import pytest

from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.dev.broker import EmbeddedBroker, create_topic
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.dev.metastore import EmbeddedMetastore
from hudi_kafka_nb.dev.registry import EmbeddedRegistry

# Every process a test starts inherits this variable, set to the session's and then the test's own mark, so processes
# can be found and killed by it even after their parent died and they were re-parented to init.
MARK = "HUDI_KAFKA_NB_TEST_RUN"
SESSION = uuid.uuid4().hex[:12]
# a test may kill and restart the session's broker: its new process is the session's, not the test's
SESSION_BROKERS = []

# Every Spark the suites start (roles and readers) lives seconds to minutes: the JIT compiler's first tier only halves
# the CPU each one burns compiling, and compiled code changes no behaviour (table.spark, "Spark with Hudi's bundle").
os.environ.setdefault("HUDI_KAFKA_NB_SPARK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1")
# Four workers on two cores, and a machine whose pace alone varies twofold: every wait for what will come (a commit, a
# role's line) allows three times its stated time before it calls the run hung (dev.servers, `patient`).
os.environ.setdefault("HUDI_KAFKA_NB_PATIENCE", "3")


def marked_processes(prefix, grace_s=15):
    """Processes (not this one, nor its own Spark JVM) marked with `prefix` still alive after `grace_s` to exit on their
    own."""
    found, session_brokers = [], {b.process.pid for b in SESSION_BROKERS if b.process}
    for process in psutil.process_iter(["pid", "ppid", "cmdline"]):
        if process.pid == os.getpid() or process.pid in session_brokers:
            continue
        if process.info["ppid"] == os.getpid() and "pyspark-shell" in " ".join(process.info["cmdline"] or []):
            continue
        try:
            if (process.environ().get(MARK) or "").startswith(prefix):
                found.append(process)
        except psutil.Error:
            continue
    _, alive = psutil.wait_procs(found, timeout=grace_s)  # a stopped role's Spark JVM exits a moment after the role
    return alive


def kill_and_describe(processes):
    described = [f"{p.pid}: {' '.join(p.info['cmdline'] or [])[:160]}" for p in processes]
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(processes, timeout=10)
    return described


@pytest.fixture(scope="session", autouse=True)
def no_process_outlives_the_suite():
    os.environ[MARK] = SESSION
    yield
    survivors = marked_processes(SESSION)
    assert not survivors, f"processes outlived the test suite (now killed): {kill_and_describe(survivors)}"


@pytest.fixture(autouse=True)
def no_process_outlives_its_test(request):
    mark = f"{SESSION}/{request.node.nodeid}"
    os.environ[MARK] = mark
    yield
    os.environ[MARK] = SESSION
    # a test that killed a session server and failed before starting it again: back for the tests after it
    for server in SESSION_BROKERS:
        if not server.running():
            server.start()
    survivors = marked_processes(mark)
    assert not survivors, f"{request.node.nodeid} left processes running (now killed): {kill_and_describe(survivors)}"


@pytest.fixture(scope="session")
def broker(tmp_path_factory):
    with EmbeddedBroker(tmp_path_factory.mktemp("broker")) as running:
        SESSION_BROKERS.append(running)
        yield running
        SESSION_BROKERS.remove(running)


@pytest.fixture(scope="session")
def registry(tmp_path_factory):
    """One schema registry (Apicurio, schemas on disk) per worker: a test may kill and restart it, on the same port and
    data."""
    with EmbeddedRegistry(tmp_path_factory.mktemp("registry")) as running:
        SESSION_BROKERS.append(running)  # a restart's new process is the session's, not the test's
        yield running
        SESSION_BROKERS.remove(running)


@pytest.fixture(scope="session")
def metastore(tmp_path_factory):
    """One Hive Metastore (Derby on disk) per worker, started by the first test that asks: a test may kill and restart
    it on the same port and catalog."""
    with EmbeddedMetastore(tmp_path_factory.mktemp("metastore")) as running:
        SESSION_BROKERS.append(running)  # as the registry's
        yield running
        SESSION_BROKERS.remove(running)


@pytest.fixture(scope="session")
def spark():
    """One Spark in the test process for every reader and in-process writer: a JVM start costs more than most reads."""
    from hudi_kafka_nb.table.spark import spark_session

    session = spark_session("tests")
    yield session
    session.stop()  # before interpreter exit, or py4j logs to closed streams


@pytest.fixture
def topics(broker):
    """A fresh 8-partition data topic and a fresh control topic, so tests never see each other's events."""
    suffix = uuid.uuid4().hex[:8]
    data = f"orders-{suffix}"
    create_topic(broker.bootstrap_servers, data, 8)
    return {"topics": data, "control_topic": f"control-{suffix}", "dead_letter_topic": f"dead-{suffix}"}


@pytest.fixture
def sink_params(broker, topics, tmp_path):
    """Job parameters for a small, fast sink on the session broker."""
    return {
        "bootstrap_servers": broker.bootstrap_servers,
        **topics,
        "table_path": str(tmp_path / "table"),
        "table_name": "orders",
        "partition_field": "region",
        "commit_interval_s": 1.0,
        "write_timeout_s": 60.0,
        "value_schema": DEMO_VALUE_SCHEMA,
        "min_participants": 2,
        "heartbeat_interval_s": 0.5,
    }


@pytest.fixture
def sink_config(sink_params):
    return load_config(dict(sink_params.items()))
