"""Kill and restart the broker mid-run: roles reconnect, nothing is lost or duplicated.

The embedded broker's memory storage dies with it, so this broker keeps its log in S3-compatible
storage served on loopback by moto, which the test starts itself."""
import subprocess, sys, time
import boto3
import pytest
from hudi_kafka_nb.chaos import LocalStack, verdict_ok, verify_table
from hudi_kafka_nb.runtime import EmbeddedBroker, free_port


@pytest.fixture
def durable_broker(tmp_path):
    port = free_port()
    s3 = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", aws_access_key_id="test",
                          aws_secret_access_key="test", region_name="us-east-1")
    for _ in range(200):
        try: client.create_bucket(Bucket="tansu"); break
        except Exception: time.sleep(0.1)
    else: pytest.fail("the local S3 server (moto) did not start")
    env = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_ENDPOINT": f"http://127.0.0.1:{port}", "AWS_ALLOW_HTTP": "true"}
    broker = EmbeddedBroker(storage="s3://tansu/", env=env, log_path=tmp_path / "broker.log").start()
    yield broker
    broker.stop(); s3.kill(); s3.wait()


@pytest.mark.xfail(strict=False, reason=(
    "Tansu 0.6.0 on s3:// storage: a consumer positioned in the log while producers are active when the broker "
    "is killed receives nothing after the restart, although produces succeed and a fresh consumer reads every "
    "record (measured 2026-11-22); the roles' long-lived control consumers therefore never see each other again. "
    "Tried on the client side, without success: re-assigning the consumer, a new consumer at the next unread "
    "offset, and a new consumer at the end (the broker's offset look-ups are wrong after the restart)."))
def test_broker_restart_mid_run_loses_and_duplicates_nothing(durable_broker, tmp_path):
    stack = LocalStack(tmp_path / "stack", participants=2, broker=durable_broker).start()
    try:
        stack.produce(3_000); stack.wait_committed()
        stack.produce(3_000)
        time.sleep(0.5)                                   # mid-transaction
        durable_broker.stop(kill=True)
        time.sleep(2)
        durable_broker.start()
        stack.produce(3_000)
        stack.wait_committed(60)
        assert set(stack.alive()) == set(stack.names), "every role survived the broker restart"
    finally:
        stack.stop()
    report = verify_table(stack.table_path, stack.ends)
    assert verdict_ok(report) and report["in_table"] == 9_000, report
