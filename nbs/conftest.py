"""For nbval (`make test-examples`): the tour keeps its outputs, and nbdev_clean blanks every execution count, which
nbval reads as "this cell was never run" and refuses. Every code cell of the kept notebook was run: number them
again."""

import os

# The tour's roles are short-lived Spark JVMs, as the test suites' are: see tests/conftest.py
os.environ.setdefault("HUDI_KAFKA_NB_SPARK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1")


def pytest_collection_modifyitems(items):
    for number, item in enumerate(items, 1):
        cell = getattr(item, "cell", None)
        if cell is not None and cell.get("cell_type") == "code" and cell.get("execution_count") is None:
            cell.execution_count = number
