"""Bad settings are refused before anything starts, with the key and the fix in the message."""

import pytest

from hudi_kafka_nb.config.setting_values import ConfigError
from hudi_kafka_nb.run.runtime import run_job


def refusal(params):
    with pytest.raises(ConfigError) as caught:
        run_job("coordinator", params)
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
    from hudi_kafka_nb.dev.servers import free_port

    assert "cannot reach Kafka" in refusal(
        {**sink_params, "bootstrap_servers": f"127.0.0.1:{free_port()}", "broker_wait_s": 2}
    )


@pytest.mark.xdist_group("papermill")  # Jupyter kernels started at once by two workers can pick one port
def test_a_misspelt_papermill_parameter_stops_the_job_with_the_packages_message(sink_params, tmp_path):
    import papermill

    from hudi_kafka_nb.dev.roles import jobs_dir

    with pytest.raises(papermill.PapermillExecutionError) as caught:
        papermill.execute_notebook(
            str(jobs_dir() / "coordinator.ipynb"),
            str(tmp_path / "out.ipynb"),
            progress_bar=False,
            parameters={**{k: str(v) for k, v in sink_params.items() if k != "value_schema"}, "comit_interval_s": 1},
        )
    assert "unknown setting 'comit_interval_s': did you mean 'commit_interval_s'?" in str(caught.value)


@pytest.mark.parametrize("role", ["coordinator", "participant"])
def test_a_table_path_that_is_a_file_is_refused_naming_the_setting(sink_params, tmp_path, role):
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(ConfigError, match="setting 'table_path': .* is a file, not a folder"):
        run_job(role, {**sink_params, "table_path": str(tmp_path / "a-file")})


def test_a_table_path_on_a_read_only_disk_is_refused_naming_the_setting(sink_params):
    with pytest.raises(ConfigError, match="setting 'table_path': cannot write under /proc/sys"):
        run_job("participant", {**sink_params, "table_path": "/proc/sys/orders"})


def test_a_participant_pointed_at_another_table_refuses_to_start(sink_params, tmp_path):
    other = tmp_path / "customers"
    (other / ".hoodie").mkdir(parents=True)
    (other / ".hoodie" / "hoodie.properties").write_text(
        "hoodie.table.name=customers\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.checksum=1\n"
    )
    with pytest.raises(Exception, match="hoodie.table.name='customers'"):
        run_job("participant", {**sink_params, "table_path": str(other)})


def test_a_transform_that_could_break_exactly_once_is_refused_saying_why(sink_params, tmp_path):
    # a value that changes each time a record is read again; a key the query's output does not have
    assert "calls rand(), which is not deterministic" in refusal(
        {**sink_params, "transform": "SELECT *, rand() AS r FROM <SRC>"}
    )
    message = refusal(
        {
            **sink_params,
            "transform": "SELECT region FROM <SRC>",
            "record_key_field": "order_id",
            "write_operation": "upsert",
            "ordering_field": "event_time",
        }
    )
    assert "setting 'record_key_field' names 'order_id', which is not a field of the transform's columns" in message
    assert not (tmp_path / "table").exists()
