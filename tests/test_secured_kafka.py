"""A secured cluster: SASL_SSL (SCRAM-SHA-512 over TLS) and ACLs on the real broker.

The sink's user holds exactly the ACLs `preflight.sink_acls` lists (the table of docs/security.md), its password comes
by reference only, and it reaches the broker through the SASL_SSL listener only. The PLAINTEXT listener is the cluster
operator's (super user): the tests create topics, users and ACLs through it, produce the upstream records and read dead
letters."""

import json
import stat
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from conftest import SESSION_BROKERS

from hudi_kafka_nb.config.setting_values import ConfigError
from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.dev.broker import EmbeddedBroker
from hudi_kafka_nb.dev.demo import wait_until_committed, wait_until_ingesting
from hudi_kafka_nb.dev.demo_data import DEMO_VALUE_SCHEMA
from hudi_kafka_nb.dev.producers import produce_orders
from hudi_kafka_nb.dev.roles import RoleProcess, participant_roles
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok, verify_stream
from hudi_kafka_nb.formats.letters import letter_source
from hudi_kafka_nb.kafka.rights import sink_acls
from hudi_kafka_nb.run.runtime import run_job
from hudi_kafka_nb.table.reading import coordinate_check, coordinates

from helpers import assert_offsets_continue, produced_coordinates, read_dead_letters

# one worker for the module (its secured broker is started once) and for every suite that starts Jupyter kernels:
# kernels started at once by two workers can pick one port
pytestmark = pytest.mark.xdist_group("papermill")


@pytest.fixture(scope="module")
def secured_broker(tmp_path_factory):
    with EmbeddedBroker(tmp_path_factory.mktemp("secured-broker"), secured=True) as running:
        SESSION_BROKERS.append(running)  # started inside the first test, it belongs to the module
        yield running
        SESSION_BROKERS.remove(running)


@pytest.fixture
def secured_sink(secured_broker, tmp_path):
    """A user with a fresh password and exactly the sink's ACLs; job parameters for the SASL_SSL listener only."""
    suffix = uuid.uuid4().hex[:8]
    user, password = f"sink-{suffix}", f"pa55-{uuid.uuid4().hex}"
    params = {
        "bootstrap_servers": secured_broker.secure_bootstrap_servers,
        "topics": f"orders-{suffix}",
        "control_topic": f"control-{suffix}",
        "dead_letter_topic": f"dead-{suffix}",
        "table_path": str(tmp_path / "table"),
        "table_name": "orders",
        "partition_field": "region",
        "commit_interval_s": 1.0,
        "write_timeout_s": 60.0,
        "value_schema": DEMO_VALUE_SCHEMA,
        "min_participants": 2,
        "heartbeat_interval_s": 0.5,
        "broker_wait_s": 10.0,
        "kafka": json.dumps(secured_broker.client_settings(user, "${env:HKN_KAFKA_PASSWORD}")),
    }
    # the operator creates the topics (the sink's user may not create any) and the user, and grants the ACLs
    admin = AdminClient({"bootstrap.servers": secured_broker.bootstrap_servers})
    for future in admin.create_topics(
        [
            NewTopic(params["topics"], 8, 1),
            NewTopic(params["control_topic"], 1, 1),
            NewTopic(params["dead_letter_topic"], 1, 1),
        ]
    ).values():
        future.result()
    secured_broker.add_user(user, password)
    acls = sink_acls(load_config(params, kafka={}), f"User:{user}")
    secured_broker.grant(acls)
    return {"params": params, "password": password, "user": user, "acls": acls, "env": {"HKN_KAFKA_PASSWORD": password}}


def files_holding(folder: Path, secret: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_the_sink_with_exactly_the_documented_acls_is_exactly_once_and_its_password_appears_nowhere(
    secured_broker, secured_sink, tmp_path
):
    params, secret, env = secured_sink["params"], secured_sink["password"], secured_sink["env"]
    table_path, workdir = Path(params["table_path"]), tmp_path / "jobs"
    roles = [RoleProcess("coordinator", params, workdir, env=env)]
    roles += participant_roles(params, 2, workdir, env=env)
    try:
        for role in roles:
            role.start()
        wait_until_ingesting(table_path, roles)
        ends = {}
        for burst in range(2):  # upstream producers write through the operator's listener
            ends.update(
                produce_orders(
                    secured_broker.bootstrap_servers,
                    params["topics"],
                    4_000,
                    bad_every=1_000,
                    seed=burst,
                    progress=False,
                )
            )
            wait_until_committed(table_path, ends, roles, timeout_s=120)
    finally:
        for role in roles:
            role.stop()
    letters = read_dead_letters(secured_broker.bootstrap_servers, params["dead_letter_topic"], expected=8)
    dead = {letter_source(h) for h, _ in letters}
    in_table, produced = coordinates(table_path), produced_coordinates(ends)
    assert len(dead) == 8 and in_table | dead == produced and not in_table & dead, (
        "every record in the table or dead-lettered, once"
    )
    assert coordinate_check(table_path)["duplicates"] == 0
    # the dead letters went in transactions the documented ACLs allow (a prefixed transactional id, their group): once
    # each
    report = verify_stream(secured_broker.bootstrap_servers, table_path, ends, params["dead_letter_topic"])
    assert verdict_ok(report) and report["dead_letters"] == 8, verdict(report)
    assert assert_offsets_continue(table_path) == {f"{t}[{p}]": end for (t, p), end in ends.items()}
    # the participants' offset commits went through with the group right they hold
    admin = AdminClient({"bootstrap.servers": secured_broker.bootstrap_servers})
    request = ConsumerGroupTopicPartitions("hudi-kafka-nb-orders", [TopicPartition(t, p) for t, p in ends])
    group = admin.list_consumer_group_offsets([request])[request.group_id].result(timeout=30)
    assert {(tp.topic, tp.partition): tp.offset for tp in group.topic_partitions} == ends

    # a malformed setting holding the reference: refused, and the secret it resolves to is not printed either
    broken = RoleProcess(
        "participant",
        {**params, "kafka": params["kafka"][:-1] + ', "sasl.username": '},
        workdir,
        name="participant-broken",
        env=env,
    ).start()
    assert broken.process.wait(120) != 0, "a malformed kafka setting stops the job"
    assert "must be a JSON object" in (workdir / "participant-broken.log").read_text()
    # executed notebooks, logs, params files, the status file and everything else under the table's .hoodie/
    assert files_holding(workdir, secret) == [] and files_holding(table_path, secret) == []
    assert '"sasl.password":"[redacted]"' in (workdir / "coordinator.log").read_text(), (
        "roles log their settings, secrets hidden"
    )
    for name in ("coordinator", "participant-0", "participant-broken"):
        for suffix in (".params.yaml", ".log", ".ipynb"):
            assert stat.S_IMODE((workdir / f"{name}{suffix}").stat().st_mode) == 0o600, (
                f"{name}{suffix} is readable by others"
            )


def refusal(role, params, env, monkeypatch) -> tuple[str, float]:
    "The role's refusal and how long it took; the role runs in this process (it refuses before Spark starts)."
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    started = time.monotonic()
    with pytest.raises(ConfigError) as refused:
        run_job(role, params)
    return str(refused.value), time.monotonic() - started


def test_each_missing_right_or_setting_is_named_at_once(secured_broker, secured_sink, monkeypatch):
    from hudi_kafka_nb.kafka.control import ControlChannel

    params, env, acls = secured_sink["params"], secured_sink["env"], secured_sink["acls"]
    participant_only = {params["topics"], params["dead_letter_topic"]}  # the coordinator only describes data topics
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for acl in acls:  # one right taken away at a time
        secured_broker.revoke([acl])
        try:
            if acl.restype.name == "TOPIC":  # checked before a role starts
                for role in ("participant",) if acl.name in participant_only else ("coordinator", "participant"):
                    message, took = refusal(role, params, env, monkeypatch)
                    assert (
                        f"{acl.operation.name} on" in message
                        and repr(acl.name) in message
                        and secured_sink["user"] in message
                    ), (acl, message)
                    assert took < 15, f"{role} took {took:.0f}s to refuse"
            elif acl.name.endswith("-control"):  # a group: refused at its consumer's first request
                with pytest.raises(ConfigError, match=f"{params['control_topic']}: .*Group authorization failed"):
                    ControlChannel(load_config(params), "participant-0").close()
        finally:
            secured_broker.grant([acl])
    kafka = json.loads(params["kafka"])

    def without(*keys):
        return {**params, "kafka": json.dumps({k: v for k, v in kafka.items() if k not in keys})}

    for changed, named in [
        (
            {**params, "kafka": json.dumps({**kafka, "sasl.password": "${env:HKN_WRONG_PASSWORD}"})},
            "invalid credentials",
        ),
        (without("ssl.ca.location"), "'ssl.ca.location'"),
        (without("security.protocol"), "'security.protocol'"),
    ]:
        message, took = refusal("participant", changed, {**env, "HKN_WRONG_PASSWORD": "not-it"}, monkeypatch)
        assert named in message and secured_sink["password"] not in message, message
        assert took < 20, f"took {took:.0f}s to refuse: {message}"


def test_a_control_topic_right_revoked_while_a_role_runs_stops_it(secured_broker, secured_sink, monkeypatch):
    from hudi_kafka_nb.core.messages import Hello
    from hudi_kafka_nb.kafka.control import ControlChannel

    for key, value in secured_sink["env"].items():
        monkeypatch.setenv(key, value)
    config = load_config(secured_sink["params"])
    channel = ControlChannel(config, "participant-0")
    try:
        write = [a for a in secured_sink["acls"] if a.name == config.control and a.operation.name == "WRITE"]
        secured_broker.revoke(write)
        with pytest.raises(ConfigError, match=f"not delivered to {config.control}: .*authorization failed"):
            channel.send(Hello(nonce="after-revocation"))
    finally:
        channel.close()
