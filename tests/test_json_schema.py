"""JSON values in Confluent's wire format, their JSON Schemas in a real schema registry (Apicurio, `EmbeddedRegistry`),
as confluent-kafka's own `JSONSerializer` writes them: two schema versions interleaved on one topic (old producers still
writing), every kind of property, bad values beside them, and the registry killed while the participant meets a schema
id it has not seen. The table holds every good record once, each field in the column its JSON Schema type means, as
confluent-kafka's `JSONDeserializer` reads it; the bad ones are in the dead-letter topic once, with their reasons."""

import msgspec
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from hudi_kafka_nb.dev.broker import create_topic
from hudi_kafka_nb.dev.chaos import LocalStack
from hudi_kafka_nb.dev.demo_data import demo_json_order, demo_json_schema
from hudi_kafka_nb.dev.producers import DEAD_LETTER_EXPECTED, send_events
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok
from hudi_kafka_nb.table.reading import read_snapshot

from helpers import produced_while_the_registry_is_away, read_dead_letters


def values(stack, registry_url, numbers, version):
    """The demo's orders at JSON Schema `version` as confluent-kafka's serializer writes them, registering the schema on
    first use, as producers do."""
    serialize = JSONSerializer(
        msgspec.json.encode(demo_json_schema(version)).decode(), SchemaRegistryClient({"url": registry_url})
    )
    context = SerializationContext(stack.topic, MessageField.VALUE)
    return [(str(i).encode(), serialize(demo_json_order(i, version), context)) for i in numbers]


def produce(stack, pairs):
    stack.feed.add_ends(send_events(stack.broker.bootstrap_servers, stack.topic, pairs))


def test_json_schema_orders_of_two_versions_land_field_by_field_while_the_registry_is_killed(
    tmp_path, broker, registry
):
    """About a minute alone: one participant, the second version (a new property) widening the table mid-stream, a
    third promoting an integer property to a number, whose column becomes a double under the whole numbers in it."""
    stack = LocalStack(
        tmp_path / "stack",
        participants=1,
        partitions=4,
        broker=broker,
        value_format="json_schema",
        value_schema="",
        schema_registry={"url": registry.url},
    )
    create_topic(broker.bootstrap_servers, stack.topic, stack.partitions)
    # the subject exists before the sink starts: the table's columns are its latest version's
    produce(stack, values(stack, registry.url, range(0, 200), version=1))
    stack.start()
    try:
        stack.wait_committed(180)
        # registered now, once the table has the first version's columns; produced while the registry is away
        version_2 = values(stack, registry.url, range(200, 400), version=2)
        old = values(stack, registry.url, range(400, 600), version=1)
        # old and new producers interleaved; bad values beside them: JSON not framed, an id no registry has, an integer
        # property holding 1.5, a body cut short
        mixed = [pair for both in zip(version_2, old) for pair in both]
        wrong = {**demo_json_order(9), "quantity": 1.5}
        bad = [
            (None, b'{"order_id": "x"}', DEAD_LETTER_EXPECTED),
            (None, b"\x00\x00\x00\x27\x0f" + old[0][1][5:], DEAD_LETTER_EXPECTED),
            (None, old[1][1][:5] + msgspec.json.encode(wrong), DEAD_LETTER_EXPECTED),
            (None, old[2][1][:-9], DEAD_LETTER_EXPECTED),
        ]
        produced_while_the_registry_is_away(stack, registry, mixed[:150] + bad + mixed[150:])
        promoting = demo_json_schema(2)
        promoting["properties"]["quantity"] = {"type": "number"}
        serialize = JSONSerializer(msgspec.json.encode(promoting).decode(), SchemaRegistryClient({"url": registry.url}))
        context = SerializationContext(stack.topic, MessageField.VALUE)
        weighed = {i: {**demo_json_order(i, 2), "quantity": 0.5 + i % 9} for i in range(600, 700)}
        produce(stack, [(str(i).encode(), serialize(order, context)) for i, order in weighed.items()])
        stack.wait_committed(180)
    finally:
        stack.stop()

    letters = read_dead_letters(broker.bootstrap_servers, stack.params["dead_letter_topic"], expected=4)
    reasons = sorted(headers["hudi_kafka_nb.error.reason"] for headers, _ in letters)
    assert len(reasons) == 4, reasons
    assert "the first byte is 123" in reasons[0] and "has no schema id 9999" in reasons[1], reasons
    assert "Expected `int`, got `float` - at `$.quantity`" in reasons[2] and "truncated" in reasons[3], reasons
    # each good record once, every field as confluent-kafka's JSONDeserializer reads it, in the table's types
    report = stack.verify()
    assert (
        verdict_ok(report) and report["in_table"] == report["rows_compared"] == 700 and report["dead_letters"] == 4
    ), verdict(report)
    types = {f.name: str(f.type) for f in read_snapshot(stack.table_path).schema}
    kinds = ("ordered_on", "placed_at", "customer", "lines", "attributes", "gift", "coupon", "quantity")
    assert {k: types[k] for k in kinds} == {
        "ordered_on": "date32[day]",
        "placed_at": "timestamp[us, tz=UTC]",
        "customer": "struct<id: int64, email: string>",
        "lines": "list<element: struct<sku: string, price: double>>",
        "attributes": "map<string, string>",
        "gift": "bool",
        "coupon": "string",
        "quantity": "double",
    }, types
