"""Secrets stay secret: a Kafka password given by reference reaches the clients and no file the roles write."""
import stat, uuid
from pathlib import Path
import pytest
from hudi_kafka_nb.config import ConfigError, load_config
from hudi_kafka_nb.demo import produce_orders, wait_until_committed, wait_until_ingesting
from hudi_kafka_nb.runtime import RoleProcess, run_job


def files_holding(folder: Path, secret: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_a_password_given_by_reference_appears_in_no_notebook_log_params_status_or_table_file(broker, sink_params, tmp_path):
    secret = f"pa55-{uuid.uuid4().hex}"
    env = {"HKN_KAFKA_PASSWORD": secret}
    # the embedded broker has no SASL listener: librdkafka takes the password and does not need it, which is enough
    # to follow the value through every client the sink opens
    params = {**sink_params, "min_participants": 1, "kafka": '{"sasl.password": "${env:HKN_KAFKA_PASSWORD}"}'}
    workdir = tmp_path / "jobs"
    roles = [RoleProcess("coordinator", params, workdir, env=env), RoleProcess("participant", params, workdir, name="participant-0", env=env)]
    try:
        for role in roles: role.start()
        wait_until_ingesting(Path(sink_params["table_path"]), roles)
        ends = produce_orders(broker.bootstrap_servers, sink_params["topics"], 2_000, bad_every=500, progress=False)
        wait_until_committed(Path(sink_params["table_path"]), ends, roles, timeout_s=120)
    finally:
        for role in roles: role.stop()
    broken = RoleProcess("participant", {**params, "kafka": '{"sasl.password": "${env:HKN_KAFKA_PASSWORD}", "sasl.username": '},
                         workdir, name="participant-broken", env=env).start()
    assert broken.process.wait(120) != 0, "a malformed kafka setting stops the job"
    assert "must be a JSON object" in (workdir / "participant-broken.log").read_text()
    assert files_holding(workdir, secret) == [] and files_holding(Path(sink_params["table_path"]), secret) == []
    assert '"sasl.password":"[redacted]"' in (workdir / "coordinator.log").read_text(), "roles log their settings, secrets hidden"
    for name in ("coordinator", "participant-0", "participant-broken"):
        for suffix in (".params.yaml", ".log", ".ipynb"):
            assert stat.S_IMODE((workdir / f"{name}{suffix}").stat().st_mode) == 0o600, f"{name}{suffix} is readable by others"


def test_a_password_in_plain_text_is_refused_without_repeating_it(sink_params):
    with pytest.raises(ConfigError) as refused:
        run_job("coordinator", {**sink_params, "kafka": {"sasl.password": "hunter2-plain"}})
    assert "in plain text" in str(refused.value) and "hunter2-plain" not in str(refused.value)
    with pytest.raises(ConfigError) as refused:
        run_job("coordinator", {**sink_params, "kafka": '{"sasl.password": "hunter2-plain", '})
    assert "hunter2-plain" not in str(refused.value)


def test_a_reference_to_a_missing_variable_names_it(sink_params):
    config = load_config({**sink_params, "kafka": {"ssl.key.password": "${env:HKN_NOT_SET_ANYWHERE}"}})
    from hudi_kafka_nb.config import client_settings
    with pytest.raises(ConfigError, match=r"'ssl.key.password' refers to \$\{env:HKN_NOT_SET_ANYWHERE\}, which is not set"):
        client_settings(config)
