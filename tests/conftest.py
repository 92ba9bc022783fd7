"""Shared fixtures: one embedded Apache Kafka broker per test session, on 127.0.0.1, and fresh topics per test."""
import uuid
import pytest
from hudi_kafka_nb.config import DEMO_VALUE_SCHEMA, load_config
from hudi_kafka_nb.runtime import EmbeddedBroker, create_topic


@pytest.fixture(scope="session")
def broker(tmp_path_factory):
    with EmbeddedBroker(tmp_path_factory.mktemp("broker")) as running:
        yield running


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
    return {"bootstrap_servers": broker.bootstrap_servers, **topics, "table_path": str(tmp_path / "table"),
            "table_name": "orders", "partition_field": "region", "commit_interval_s": 1.0, "write_timeout_s": 60.0,
            "value_schema": DEMO_VALUE_SCHEMA, "min_participants": 2, "heartbeat_interval_s": 0.5}


@pytest.fixture
def sink_config(sink_params):
    return load_config({k: v for k, v in sink_params.items()})
