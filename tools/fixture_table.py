"""Write the small table the reading and chaos notebooks show their functions on: nbs/fixtures/orders_table.zip.

    .venv/bin/python tools/fixture_table.py

Two commits of the sink's own writes (4 order events per Kafka partition each, partitions 0 and 1 of topic `orders`),
made as the coordinator and participants make them (FencedTable, HudiCommitter, HudiWriter) in one process, by the
Hudi bundle the project pins; then zipped. Run it again after a Hudi upgrade."""

import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from hudi_kafka_nb.table.spark import spark_session  # noqa: E402

from table_builder import build_table  # noqa: E402

TARGET = ROOT / "nbs" / "fixtures" / "orders_table.zip"


def main():
    folder = Path(tempfile.mkdtemp()) / "orders"
    spark = spark_session("fixture")
    try:
        build_table(spark, folder, commits=2, per_commit=8)
    finally:
        spark.stop()
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(TARGET, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            # Hadoop's checksum files and Hudi's lock-free temporary folders say nothing a reader needs
            if path.is_file() and not path.name.endswith(".crc"):
                archive.write(path, path.relative_to(folder.parent))
    shutil.rmtree(folder.parent)
    print(f"{TARGET}: {TARGET.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
