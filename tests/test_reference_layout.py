"""Our tables against tables written by Hudi's own Spark writer (shared/reference/hudi-tables)."""
import json, re, zipfile
from pathlib import Path
import pyarrow.parquet as pq
import pytest
from hudi_kafka_nb.table import META_COLUMNS, parse_properties
from table_builder import build_table

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "hudi-tables"
FILE_NAME = re.compile(r"^[0-9a-f-]{36}-\d+_\d+-\d+-\d+_\d{17}\.parquet$")
OPTIONAL_KEYS = {"hoodie.table.precombine.field"}      # only set when a precombine field is configured


def unpack(name, tmp_path):
    if not (REFERENCE / name).exists(): pytest.fail(f"reference tables missing at {REFERENCE}")
    with zipfile.ZipFile(REFERENCE / name) as z: z.extractall(tmp_path)
    return next(p for p in tmp_path.iterdir() if p.name.startswith("v6"))


def layout(table):
    commit = json.loads(sorted((table / ".hoodie").glob("*.commit"))[0].read_text())
    stat = next(iter(commit["partitionToWriteStats"].values()))[0]
    files = [p for p in table.rglob("*.parquet") if "__MACOSX" not in str(p)]
    partition_metadata = next(p for p in table.rglob(".hoodie_partition_metadata") if "__MACOSX" not in str(p))
    return {"properties": parse_properties((table / ".hoodie" / "hoodie.properties").read_text()), "commit": commit, "stat": stat,
            "files": files, "partition_metadata": {l.split("=")[0] for l in partition_metadata.read_text().splitlines() if "=" in l}}


@pytest.mark.parametrize("reference,partition_field", [("sample_table_cow_v6_simplekeygen_nonhivestyle.zip", "region"),
                                                       ("sample_table_cow_v6_nonpartitioned.zip", "")])
def test_layout_matches_hudis_own_writer(tmp_path, reference, partition_field):
    ours = layout(Path(build_table(tmp_path / "ours", "pyarrow", commits=1, partition_field=partition_field)[0].table_path))
    theirs = layout(unpack(reference, tmp_path / "ref"))
    assert set(theirs["properties"]) - OPTIONAL_KEYS <= set(ours["properties"])
    for key in ("hoodie.table.type", "hoodie.table.version", "hoodie.timeline.layout.version", "hoodie.archivelog.folder"):
        assert ours["properties"][key] == theirs["properties"][key]
    assert set(ours["commit"]) == set(theirs["commit"])
    assert set(ours["stat"]) == set(theirs["stat"])
    assert ours["partition_metadata"] == theirs["partition_metadata"]
    for f in ours["files"] + theirs["files"]: assert FILE_NAME.match(f.name), f.name
    assert pq.read_schema(ours["files"][0]).names[:5] == pq.read_schema(theirs["files"][0]).names[:5] == META_COLUMNS
    footer_keys = lambda f: set(pq.read_metadata(f).metadata) - {b"ARROW:schema", b"org.apache.hudi.bloomfilter", b"hoodie_bloom_filter_type_code", b"writer.model.name"}
    assert footer_keys(theirs["files"][0]) <= footer_keys(ours["files"][0])
    assert (partition_field == "") == (ours["commit"]["partitionToWriteStats"].keys() == {""})
