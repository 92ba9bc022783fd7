"""Avro values in Confluent's wire format, with their schemas in a real schema registry (Apicurio, `EmbeddedRegistry`),
as confluent-kafka's own `AvroSerializer` writes them: two schema versions interleaved on one topic (old producers still
writing), every kind of type, bad values beside them, and the registry killed while the participant meets a schema id it
has not seen. The table holds every good record once, each column of the type its Avro type means (Spark's reader and
hudi-rs agree); the bad ones are in the dead-letter topic with their reasons; no good record is dead-lettered while the
registry is away."""

import decimal

import msgspec
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from hudi_kafka_nb.dev.broker import create_topic
from hudi_kafka_nb.dev.chaos import LocalStack
from hudi_kafka_nb.dev.demo_data import demo_avro_order, demo_avro_schema
from hudi_kafka_nb.dev.producers import DEAD_LETTER_EXPECTED, send_events
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok
from hudi_kafka_nb.table.reading import read_snapshot, spark_read
from hudi_kafka_nb.table.timeline import table_services_log

from helpers import log_of, produced_while_the_registry_is_away, read_dead_letters, wait_for


def serializer(registry_url, version):
    """confluent-kafka's serializer of the demo's orders at schema `version`, registering it on first use, as producers
    do."""
    return AvroSerializer(
        SchemaRegistryClient({"url": registry_url}), msgspec.json.encode(demo_avro_schema(version)).decode()
    )


def values(stack, registry_url, numbers, version):
    serialize = serializer(registry_url, version)
    return [
        (str(i).encode(), serialize(demo_avro_order(i, version), SerializationContext(stack.topic, MessageField.VALUE)))
        for i in numbers
    ]


def produce(stack, pairs):
    stack.feed.add_ends(send_events(stack.broker.bootstrap_servers, stack.topic, pairs))


def plain(value):
    "A value as Spark's rows and hudi-rs's Arrow give it, made comparable: rows and maps as dicts, instants in UTC."
    if hasattr(value, "asDict"):
        return {k: plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        # hudi-rs gives a map as (key, value)s
        pairs = value and all(isinstance(v, tuple) and not hasattr(v, "asDict") for v in value)
        return dict(value) if pairs else [plain(v) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    if getattr(value, "tzinfo", None) is not None:
        return value.replace(tzinfo=None)
    return value


def row(value: dict) -> dict:
    "A row made comparable; an empty map is an empty dict whichever reader gave it."
    value = plain(value)
    return {**value, "attributes": dict(value["attributes"] or {})}


def test_avro_orders_of_two_schema_versions_land_with_their_types_while_the_registry_is_killed(
    tmp_path, broker, registry, spark
):
    """Then a third version, retyping a field, becomes the subject's latest while the coordinator restarts: the table
    keeps its column's type, the third version's orders are dead-lettered, the others land. A fourth promotes the field
    to a long and adds a field inside a struct, interleaved with the first: both columns widen in place, every order
    lands."""
    stack = LocalStack(
        tmp_path / "stack",
        participants=1,
        partitions=4,
        broker=broker,
        value_format="avro",
        value_schema="",
        schema_registry={"url": registry.url},
        record_key_field="order_id",
    )
    create_topic(broker.bootstrap_servers, stack.topic, stack.partitions)
    # the subject exists before the sink starts
    produce(stack, values(stack, registry.url, range(0, 200), version=1))
    stack.start()
    try:
        # registered now, produced while the registry is away
        version_2 = values(stack, registry.url, range(200, 400), version=2)
        old = values(stack, registry.url, range(400, 600), version=1)
        stack.wait_committed(180)
        # old and new producers interleaved; bad values beside them: JSON, an id no registry has, a body cut short
        mixed = [pair for both in zip(version_2, old) for pair in both]
        bad = [
            (None, b'{"order_id": "x"}', DEAD_LETTER_EXPECTED),
            (None, b"\x00\x00\x00\x27\x0f" + old[0][1][5:], DEAD_LETTER_EXPECTED),
            (None, old[1][1][:-9], DEAD_LETTER_EXPECTED),
        ]
        produced_while_the_registry_is_away(stack, registry, mixed[:150] + bad + mixed[150:])
        # a producer's mistake: version 3 writes quantity as a string, and is now the subject's latest version; the
        # coordinator, restarted meanwhile, keeps the table's int column: the retyped orders alone are dead-lettered
        produce(
            stack, [(*pair, DEAD_LETTER_EXPECTED) for pair in values(stack, registry.url, range(600, 620), version=3)]
        )
        stack.kill("coordinator")
        stack.restart("coordinator")
        produce(stack, values(stack, registry.url, range(620, 700), version=1))
        stack.wait_committed(180)
        promoting = values(stack, registry.url, range(700, 760), version=4)
        older = values(stack, registry.url, range(760, 800), version=1)
        produce(stack, promoting[:20] + [pair for both in zip(older, promoting[20:]) for pair in both])
        stack.wait_committed(180)
    finally:
        stack.stop()

    assert "give field 'quantity' as string, but the table's column is int32" in log_of(stack, "coordinator")
    letters = read_dead_letters(broker.bootstrap_servers, stack.params["dead_letter_topic"], expected=23)
    reasons = sorted(headers["hudi_kafka_nb.error.reason"] for headers, _ in letters)
    retyped = [r for r in reasons if "'quantity' as string" in r]
    others = [r for r in reasons if r not in retyped]
    assert (
        len(retyped) == 20
        and len(others) == 3
        and "the first byte is 123" in others[0]
        and "has no schema id 9999" in others[1]
    ), reasons
    assert "does not read with schema id" in others[2], reasons
    # each good record as confluent-kafka's AvroDeserializer reads it, in the table's types
    report = stack.verify()
    assert (
        verdict_ok(report) and report["in_table"] == report["rows_compared"] == 780 and report["dead_letters"] == 23
    ), verdict(report)

    # every column of the type its Avro type means, and every value as produced; Spark's reader and hudi-rs agree
    types = {f.name: f.dataType.simpleString() for f in spark_read(spark, stack.table_path).schema.fields}
    assert {
        k: types[k]
        for k in (
            "amount",
            "ordered_on",
            "placed_at",
            "paid_at",
            "local_time",
            "cutoff",
            "checksum",
            "customer",
            "lines",
            "attributes",
            "coupon",
            "quantity",
        )
    } == {
        "amount": "decimal(10,2)",
        "ordered_on": "date",
        "placed_at": "timestamp",
        "paid_at": "timestamp",
        "local_time": "timestamp",
        "cutoff": "int",
        "checksum": "binary",
        "customer": "struct<id:bigint,email:string,country:string>",
        "lines": "array<struct<sku:string,price:decimal(12,3)>>",
        "attributes": "map<string,string>",
        "coupon": "string",
        "quantity": "bigint",
    }
    columns = [f["name"] for f in demo_avro_schema(4)["fields"]]
    expected = {}
    for i in (*range(600), *range(620, 800)):
        order = demo_avro_order(i, 2 if 200 <= i < 400 else 4 if 700 <= i < 760 else 1)
        expected[order["order_id"]] = row({"coupon": None, **order, "customer": {"country": None, **order["customer"]}})
    by_spark = {r["order_id"]: row(r.asDict()) for r in spark_read(spark, stack.table_path).select(*columns).collect()}
    by_hudi_rs = {r["order_id"]: row(r) for r in read_snapshot(stack.table_path, columns).to_pylist()}
    assert by_spark == by_hudi_rs == expected, next(
        (k, by_spark.get(k), by_hudi_rs.get(k), v)
        for k, v in expected.items()
        if not by_spark.get(k) == by_hudi_rs.get(k) == v
    )
    assert decimal.Decimal("1.99") in {r["amount"] for r in by_spark.values()}


LINE_KEY = {
    "type": "record",
    "name": "OrderKey",
    "namespace": "shop",
    "fields": [{"name": "region", "type": "string"}, {"name": "order_id", "type": "string"}],
}
LINE_VALUE = {
    "type": "record",
    "name": "OrderState",
    "namespace": "shop",
    "fields": [
        {"name": "status", "type": {"type": "enum", "name": "State", "symbols": ["NEW", "PAID", "SHIPPED"]}},
        {"name": "version", "type": "long"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "units", "type": "int"},
    ],
}
# a later version of the states: `units` promoted to a long
LINE_VALUE_PROMOTED = {**LINE_VALUE, "fields": [*LINE_VALUE["fields"][:-1], {"name": "units", "type": "long"}]}


def test_a_keyed_upsert_with_composite_avro_keys_keeps_each_keys_latest_state(tmp_path, broker, registry, spark):
    """Keys in Avro, as producers that key by a record of the key's columns write them (`key_format="avro"`): the value
    does not hold the key, the table's key is the key record's two fields (Hudi's complex key generator), upserted into
    merge-on-read with an ordering field; updates arrive out of order through different partitions. The later states
    promote a field to a long: the column widens under the rows already in the table's files, which merge with it."""
    import random

    stack = LocalStack(
        tmp_path / "stack",
        participants=1,
        partitions=4,
        broker=broker,
        value_format="avro",
        key_format="avro",
        schema_registry={"url": registry.url},
        value_schema="",
        record_key_field="region,order_id",
        write_operation="upsert",
        ordering_field="version",
        table_type="MERGE_ON_READ",
        max_buffered_records=750,
        max_batch_records=250,
        # compacted every second delta commit: base files of ints merged with logs of longs
        hudi_options={"hoodie.compact.inline.max.delta.commits": "2"},
    )
    client = SchemaRegistryClient({"url": registry.url})
    keys = AvroSerializer(client, msgspec.json.encode(LINE_KEY).decode())
    states = AvroSerializer(client, msgspec.json.encode(LINE_VALUE).decode())
    promoted = AvroSerializer(client, msgspec.json.encode(LINE_VALUE_PROMOTED).decode())
    rng, latest, events = random.Random(5), {}, []
    for version in range(1, 6):
        for n in range(300):
            key = {"region": ("eu", "us", "ap")[n % 3], "order_id": f"o{n}"}
            state = {
                "status": ("NEW", "PAID", "SHIPPED")[(n + version) % 3],
                "version": version,
                "amount": decimal.Decimal(n * version) / 100,
                "units": n + (2**33 if version >= 4 else 0),
            }
            events.append((key, state))
            latest[(key["region"], key["order_id"])] = state
    rng.shuffle(events)  # a later version may come first, through another partition

    def pair(key, state):
        value = promoted if state["version"] >= 4 else states
        return (
            keys(key, SerializationContext(stack.topic, MessageField.KEY)),
            value(state, SerializationContext(stack.topic, MessageField.VALUE)),
        )

    create_topic(broker.bootstrap_servers, stack.topic, stack.partitions)
    # the table starts with every key in an int version, its files written before the promoting version is registered;
    # the later commits only update, so Hudi writes them as log files (a commit with new keys would rewrite the small
    # base files instead, and leave nothing to compact)
    first = list({(k["region"], k["order_id"]): (k, v) for k, v in reversed(events) if v["version"] < 4}.values())
    produce(stack, [pair(k, v) for k, v in first])
    stack.start()
    try:
        stack.wait_committed(180)
        produce(stack, [pair(k, v) for k, v in events if (k, v) not in first])
        stack.wait_committed(180)
        wait_for(
            lambda: any(s["action"] == "compaction" for s in table_services_log(stack.table_path)), 120, "a compaction"
        )
    finally:
        stack.stop()
    assert "FIELDS_ADDED" in log_of(stack, "coordinator")
    services = table_services_log(stack.table_path)
    assert "compaction" in {s["action"] for s in services}, services
    columns = ["region", "order_id", "status", "version", "amount", "units"]
    rows = read_snapshot(stack.table_path, columns).to_pylist()
    assert len(rows) == len(latest) == 300
    assert {(r["region"], r["order_id"]): {k: r[k] for k in columns[2:]} for r in rows} == latest
    by_spark = spark_read(spark, stack.table_path)
    assert dict(by_spark.dtypes)["units"] == "bigint"
    assert {(r["region"], r["order_id"]): r.asDict() for r in by_spark.select(*columns).collect()} == {
        k: {"region": k[0], "order_id": k[1], **v} for k, v in latest.items()
    }
