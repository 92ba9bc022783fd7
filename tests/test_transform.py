"""A transform runs in the participant, by DuckDB through sqlglot's translation of Spark SQL: its rows are the rows
Spark SQL makes of the same records with the same query."""

import decimal

import msgspec

from hudi_kafka_nb.config.settings import load_config
from hudi_kafka_nb.core.kafka_records import RawRecord
from hudi_kafka_nb.formats.records import decode_records
from hudi_kafka_nb.formats.transform import transform_rows

# the functions a transform's users reach for first: struct fields, times and dates, text, numbers, conditions
SHAPING = r"""
SELECT order_id, upper(status) AS status, customer.id AS customer_id, customer.address.city AS city,
       date_format(from_unixtime(created_ms / 1000), 'yyyy-MM-dd') AS created_day,
       date_format(placed_at, 'yyyy-MM-dd HH:mm') AS placed_minute, to_date(placed_at) AS placed_on,
       hour(placed_at) AS placed_hour, year(placed_at) * 100 + month(placed_at) AS placed_month,
       CAST(amount_text AS DECIMAL(10, 2)) AS amount, CAST(quantity AS STRING) AS quantity_text,
       coalesce(note, 'none') AS note, concat_ws('-', region, status) AS region_status, concat('r-', region) AS zone,
       substring(order_id, 2, 3) AS digits, length(order_id) AS id_length, lower(trim(tag)) AS tag,
       regexp_extract(order_id, 'o(\d+)', 1) AS number, regexp_replace(tag, '[^a-z]', '') AS letters,
       CASE WHEN quantity > 5 THEN 'bulk' ELSE 'single' END AS size, quantity * 2 + 1 AS odd,
       amount_f * quantity AS total, quantity % 3 AS remainder, abs(quantity - 5) AS distance,
       nullif(region, 'eu') AS not_eu, if(quantity IS NULL, -1, quantity) AS quantity_or_minus_one,
       greatest(quantity, 4) AS at_least_four, split(tags, ',')[0] AS first_tag, size(split(tags, ',')) AS tag_count,
       date_add(to_date(placed_at), 7) AS week_later, datediff(to_date(placed_at), DATE'2026-01-01') AS days_in
FROM <SRC> WHERE status <> 'test'
"""


def event(i: int) -> dict:
    return {
        "order_id": f"o{i:05d}",
        "status": ("paid", "test", "shipped", "new")[i % 4],
        "region": ("eu", "us", None)[i % 3],
        "customer": {"id": i % 7, "address": {"city": ("Delft", None)[i % 2]}},
        "created_ms": 1_764_000_000_000 + i * 3_600_123,
        "placed_at": f"2026-0{1 + i % 9}-1{i % 10}T0{i % 10}:3{i % 10}:00",
        "amount_text": ("12.345", "7", "abc", "-0.005", None)[i % 5],
        "amount_f": 1.1 * i,
        "quantity": None if i % 11 == 0 else i % 9,
        "note": None if i % 2 else "gift",
        "tag": ("  Web-1 ", "APP", "")[i % 3],
        "tags": ("a,b", "c", "")[i % 3],
    }


def test_a_transforms_rows_are_spark_sqls_rows(spark):
    config = load_config(
        bootstrap_servers="127.0.0.1:9092",
        topics=["orders"],
        table_path="/tmp/unused",
        table_name="orders",
        value_schema={
            "order_id": "string",
            "status": "string",
            "region": "string",
            "customer": "struct<id: int64, address: struct<city: string>>",
            "created_ms": "int64",
            "placed_at": "timestamp[ms]",
            "amount_text": "string",
            "amount_f": "double",
            "quantity": "int64",
            "note": "string",
            "tag": "string",
            "tags": "string",
        },
        transform=SHAPING,
    )
    records = [RawRecord("orders", 0, i, 1_764_000_000_000, None, msgspec.json.encode(event(i))) for i in range(60)]
    decoded, dead = decode_records(records, config)
    assert not dead
    ours, failed = transform_rows(config, decoded, records)
    assert not failed and ours.num_rows == 45

    from pyspark.sql.pandas.types import from_arrow_schema

    from hudi_kafka_nb.table.spark import arrow_frame

    arrow_frame(spark, decoded, from_arrow_schema(decoded.schema)).createOrReplaceTempView("transform_source")
    theirs = [row.asDict(recursive=True) for row in spark.sql(SHAPING.replace("<SRC>", "transform_source")).collect()]
    kept = [c for c in ours.column_names if not c.startswith("kafka_")]
    by_spark = {row["order_id"]: {c: row[c] for c in kept} for row in theirs}
    differing = {
        (row["order_id"], c): (row[c], by_spark[row["order_id"]][c])
        for row in ours.select(kept).to_pylist()
        for c in kept
        if row[c] != by_spark[row["order_id"]][c]
    }
    assert not differing, differing
    assert by_spark["o00000"]["amount"] == decimal.Decimal("12.35")  # Spark's rounding, as DuckDB's
