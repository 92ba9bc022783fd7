"""Bad settings are refused before anything starts, with the key and the fix in the message."""
import pytest
from hudi_kafka_nb.config import ConfigError
from hudi_kafka_nb.runtime import run_job


def refusal(params):
    with pytest.raises(ConfigError) as caught: run_job("coordinator", params)
    return str(caught.value)


def test_unknown_key_is_named_with_a_suggestion(sink_params):
    assert "did you mean 'commit_interval_s'" in refusal({**sink_params, "commit_intervall_s": 2})


def test_missing_table_path(sink_params):
    params = {k: v for k, v in sink_params.items() if k != "table_path"}
    assert "table_path" in refusal(params)


def test_topic_that_does_not_exist_is_refused_before_the_table_is_created(sink_params, tmp_path):
    message = refusal({**sink_params, "topics": "no-such-topic"})
    assert "'no-such-topic'" in message and "create them or fix the setting" in message
    assert not (tmp_path / "table").exists()


def test_wrong_type_names_the_key(sink_params):
    assert "'min_participants'" in refusal({**sink_params, "min_participants": "two"})


def test_unreachable_broker_is_named(sink_params):
    from hudi_kafka_nb.runtime import free_port
    assert "cannot reach Kafka" in refusal({**sink_params, "bootstrap_servers": f"127.0.0.1:{free_port()}", "broker_wait_s": 2})
