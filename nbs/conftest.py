"""For nbval (`make test-examples`, and `make test-pytest`, which runs the tour beside the suites): the tour keeps its outputs, and nbdev_clean blanks every execution count, which
nbval reads as "this cell was never run" and refuses. Every code cell of the kept notebook was run: number them again."""
import os
import pytest

# The tour's roles are short-lived Spark JVMs, as the test suites' are: see tests/conftest.py
os.environ.setdefault("HUDI_KAFKA_NB_SPARK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1")


@pytest.hookimpl(tryfirst=True)       # before pytest-xdist reads the group marks
def pytest_collection_modifyitems(items):
    for number, item in enumerate(items, 1):
        cell = getattr(item, "cell", None)
        if cell is None: continue
        if cell.get("cell_type") == "code" and cell.get("execution_count") is None: cell.execution_count = number
        # `make test` runs the tour beside the suites: its cells stay together, in order, on the worker that runs the
        # suites starting Jupyter kernels (two kernels started at once may pick one port)
        item.add_marker(pytest.mark.xdist_group("papermill"))
