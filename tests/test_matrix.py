"""The feature matrix (`nbs/96_matrix.ipynb`): every pair of the sink's features (value format, write mode, table
type, transform, routed tables, start position, storage) meets in a small real sink, judged by its content."""

import subprocess
import sys

import msgspec
import pytest

from hudi_kafka_nb.dev.matrix import cell_name, covering_cells
from hudi_kafka_nb.dev.servers import patient


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_every_pair_of_features_meets_in_a_sink_whose_content_is_exact(tmp_path):
    """About two minutes alone, three to five under the suite's load: a dozen cells on one broker, one registry and
    one MinIO, each a coordinator and a participant on threads of one process with one Spark, ten to twenty seconds a
    cell, two at a time. The matrix runs in a process of its own, whose Spark session has S3A's jars from the start."""
    run = subprocess.run(
        [sys.executable, "-c", "from hudi_kafka_nb.dev.matrix import main; main()", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=patient(1200),
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-6000:]
    results = msgspec.json.decode((tmp_path / "results.json").read_bytes())
    assert [r["cell"] for r in results] == covering_cells()
    failed = {cell_name(r["cell"]): r["verdict"] for r in results if not r["ok"]}
    assert not failed, failed
    print(run.stdout)  # what each cell cost, in pytest's report of a run with -s
