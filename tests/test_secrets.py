"""Secrets stay secret: a plain one is refused without being repeated, a reference to nothing is named.

That a password given by reference reaches the clients and no file the roles write is checked on the secured broker
(test_secured_kafka.py), where a wrong one would be refused."""

import pytest

from hudi_kafka_nb.config.setting_values import ConfigError
from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.run.runtime import run_job


def test_a_password_in_plain_text_is_refused_without_repeating_it(sink_params):
    with pytest.raises(ConfigError) as refused:
        run_job("coordinator", {**sink_params, "kafka": {"sasl.password": "hunter2-plain"}})
    assert "in plain text" in str(refused.value) and "hunter2-plain" not in str(refused.value)
    with pytest.raises(ConfigError) as refused:
        run_job("coordinator", {**sink_params, "kafka": '{"sasl.password": "hunter2-plain", '})
    assert "hunter2-plain" not in str(refused.value)


def test_a_reference_to_a_missing_variable_names_it(sink_params):
    config = load_config({**sink_params, "kafka": {"ssl.key.password": "${env:HKN_NOT_SET_ANYWHERE}"}})
    from hudi_kafka_nb.config.settings import client_settings

    with pytest.raises(
        ConfigError, match=r"'ssl.key.password' refers to \$\{env:HKN_NOT_SET_ANYWHERE\}, which is not " r"set"
    ):
        client_settings(config)
