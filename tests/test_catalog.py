"""The tables the sink writes, found by name in a real Hive Metastore (`table.meta_sync`): kept in step commit by
commit, through a widening, a partition born mid-stream and the metastore killed."""

import re

from hudi_kafka_nb.dev.chaos import LocalStack
from hudi_kafka_nb.dev.verdict import verdict, verdict_ok

from helpers import catalog_query, log_of, order_event, wait_for


def test_the_table_is_found_by_name_and_kept_in_step_while_the_metastore_is_killed(tmp_path, broker, metastore):
    """About a minute: a stack syncing into the metastore; the metastore killed while the events bring a new field and
    a new region, commits going on without it; started again, the catalog catches up. A Spark of another process then
    finds the table by name: every row, the new column, the new partition."""
    stack = LocalStack(
        tmp_path / "stack",
        participants=1,
        partitions=2,
        broker=broker,
        hive_style_partitioning=True,
        metastore=metastore,
        hive_sync_database="shop",  # the chaos test syncs its own orders into "stack"
    ).start()
    try:
        stack.produce(500)
        stack.wait_committed()
        metastore.kill()
        mark = len(log_of(stack, "coordinator"))
        stack.produce(500)
        stack.send([order_event(i, prefix="m", region="moon", coupon=f"C{i}") for i in range(40)])
        stack.wait_committed()
        wait_for(
            lambda: "catalog sync of shop.orders failed" in log_of(stack, "coordinator")[mark:],
            60,
            "a failed sync to be logged",
        )
        metastore.start()
        stack.produce(200)
        stack.wait_committed()
        wait_for(
            lambda: re.search(r"catalog sync of shop.orders caught up", log_of(stack, "coordinator")[mark:]),
            90,
            "the catalog to catch up",
        )
    finally:
        stack.stop()
    report = stack.verify()
    assert verdict_ok(report), verdict(report)
    answers = catalog_query(
        metastore.uris,
        {
            "rows": "SELECT count(*) FROM shop.orders",
            "coupons": "SELECT count(coupon) FROM shop.orders WHERE region = 'moon'",
            "partitions": "SHOW PARTITIONS shop.orders",
            "columns": "SHOW COLUMNS IN shop.orders",
        },
        cwd=tmp_path,
    )
    assert answers["rows"] == [[report["in_table"]]], (answers, report["in_table"])
    assert answers["coupons"] == [[40]], answers
    assert ["region=moon"] in answers["partitions"], answers
    columns = [row[0] for row in answers["columns"]]
    assert columns.index("coupon") > columns.index("kafka_key"), f"a new column moved the others: {columns}"
    assert not (tmp_path / "stack" / "metastore_db").exists(), "the coordinator's Hive client started no metastore"
