"""Protobuf values in Confluent's wire format, their schemas in a real schema registry (Apicurio, `EmbeddedRegistry`),
as confluent-kafka's own `ProtobufSerializer` writes them (a base64 file descriptor registered), and as a Java producer
does (`.proto` text registered): two schema versions interleaved on one topic, every kind of field, bad values beside
them, and the registry killed while the participant meets a schema id it has not seen. The table holds every good
record once, each field in the column its Protobuf type means, as confluent-kafka's `ProtobufDeserializer` reads it;
the bad ones are in the dead-letter topic once, with their reasons."""

import json
import urllib.request

from hudi_kafka_nb.dev.avro_producers import order_writers
from hudi_kafka_nb.dev.broker import create_topic
from hudi_kafka_nb.dev.chaos import LocalStack
from hudi_kafka_nb.dev.demo_data import demo_protobuf_order, demo_protobuf_schema
from hudi_kafka_nb.dev.producers import DEAD_LETTER_EXPECTED, send_events
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok
from hudi_kafka_nb.table.reading import read_snapshot

from helpers import produced_while_the_registry_is_away, read_dead_letters


def registered_as_text(registry_url, subject, text):
    "The id of `.proto` text registered as Confluent's Java serializer registers it (Confluent's REST API)."
    request = urllib.request.Request(
        f"{registry_url}/subjects/{subject}/versions",
        data=json.dumps({"schemaType": "PROTOBUF", "schema": text}).encode(),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())["id"]


def with_customer_ref(row: dict) -> dict:
    "The row the test's transform makes of an order, written apart from the sink's engine."
    customer = row.get("customer") or {}
    # the deserializer gives an int64 as text (Protobuf's JSON mapping)
    return {**row, "customer_ref": None if customer.get("id") is None else int(customer["id"]) + 1}


def test_protobuf_orders_of_two_versions_land_field_by_field_while_the_registry_is_killed(tmp_path, broker, registry):
    """About a minute alone: one participant, the second version (a new field, and the customer's id promoted from
    int32 to int64 inside its message) widening the table mid-stream, through a transform that computes a column of
    the promoted field."""
    stack = LocalStack(
        tmp_path / "stack",
        participants=1,
        partitions=4,
        broker=broker,
        value_format="protobuf",
        value_schema="",
        schema_registry={"url": registry.url},
        # a computed column of a field the second version promotes: promoted with it
        transform="SELECT *, customer.id + 1 AS customer_ref FROM <SRC>",
        expected_shape=with_customer_ref,
    )
    create_topic(broker.bootstrap_servers, stack.topic, stack.partitions)
    writers = order_writers(registry.url, stack.topic, register=(), value_format="protobuf")

    def orders(numbers, version):
        return [(str(i).encode(), writers[version](i)) for i in numbers]

    # the subject exists before the sink starts: the table's columns are its latest version's
    stack.feed.add_ends(send_events(broker.bootstrap_servers, stack.topic, orders(range(0, 200), 1)))
    stack.start()
    try:
        stack.wait_committed(180)
        # registered now, once the table has the first version's columns; produced while the registry is away
        version_2, old = orders(range(200, 400), 2), orders(range(400, 600), 1)
        text_id = registered_as_text(registry.url, f"{stack.topic}-value", demo_protobuf_schema(2))
        header = b"\x00" + text_id.to_bytes(4, "big") + b"\x00"
        from_java = [(str(i).encode(), header + demo_protobuf_order(i, 2).SerializeToString()) for i in range(600, 700)]
        # old and new producers interleaved; bad values beside them: JSON not framed, an id no registry has, a status
        # no enum value has, a body cut short within a field, a field its schema does not declare, no message indexes
        mixed = [pair for three in zip(version_2, old, from_java + [None] * 100) for pair in three if pair]
        bad = [
            (None, b'{"order_id": "x"}', DEAD_LETTER_EXPECTED),
            (None, b"\x00\x00\x00\x27\x0f" + old[0][1][5:], DEAD_LETTER_EXPECTED),
            (None, old[1][1] + b"\x18\x07", DEAD_LETTER_EXPECTED),
            (None, old[2][1][:-3], DEAD_LETTER_EXPECTED),
            (None, old[3][1] + b"\x98\x06\x01", DEAD_LETTER_EXPECTED),
            (None, old[4][1][:5], DEAD_LETTER_EXPECTED),
        ]
        produced_while_the_registry_is_away(stack, registry, mixed[:150] + bad + mixed[150:])
    finally:
        stack.stop()

    letters = read_dead_letters(broker.bootstrap_servers, stack.params["dead_letter_topic"], expected=6)
    reasons = sorted(headers["hudi_kafka_nb.error.reason"] for headers, _ in letters)
    assert len(reasons) == 6, reasons
    for expected in [
        "the first byte is 123",
        "has no schema id 9999",
        "field 'status' holds 7, which enum shop.Order.Status does not name",
        "does not read as schema id",
        "fields numbered [99]",
        "its message indexes end short",
    ]:
        assert any(expected in reason for reason in reasons), (expected, reasons)
    # each good record once, every field as confluent-kafka's ProtobufDeserializer reads it, in the table's types
    report = stack.verify()
    assert (
        verdict_ok(report) and report["in_table"] == report["rows_compared"] == 700 and report["dead_letters"] == 6
    ), verdict(report)
    types = {f.name: str(f.type) for f in read_snapshot(stack.table_path).schema}
    assert {k: types[k] for k in ("status", "placed_at", "customer", "lines", "attributes", "tracking_number")} == {
        "status": "string",
        "placed_at": "timestamp[us, tz=UTC]",
        "customer": "struct<id: int64, email: string>",
        "lines": "list<element: struct<sku: string, price: double>>",
        "attributes": "map<string, string>",
        "tracking_number": "decimal128(20, 0)",
    }, types
    assert types["customer_ref"] == "int64", types
    assert {k: types[k] for k in ("gift", "card", "note", "coupon")} == {
        "gift": "bool",
        "card": "string",
        "note": "string",
        "coupon": "string",
    }, types
