"""README.md says what nbs/index.ipynb says, is a front door (short, every page of the guide linked from it), and gives
the two commands CI and users run; the guide's pages (docs/) link only to what exists."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from render_readme import render  # noqa: E402


def test_readme_is_rendered_from_index_notebook():
    assert (ROOT / "README.md").read_text() == render(), "README.md is stale: run `make readme`"


def test_readme_commands_are_the_ones_ci_runs():
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_readme_acl_table_is_what_the_sink_needs():
    """The guide's ACL table lists exactly `preflight.sink_acls` for its example (table and topic `orders`, default
    names)."""
    import re

    from hudi_kafka_nb.config.settings import load_config
    from hudi_kafka_nb.kafka.rights import sink_acls

    section = (ROOT / "docs" / "security.md").read_text()
    listed = {
        (kind, name, op.strip())
        for kind, name, ops in re.findall(
            r"^\| (topic|group|transactional_id) \| " r"`([^`]+)`[^|]* \| ([A-Z, ]+) \|", section, re.M
        )
        for op in ops.split(",")
    }
    config = load_config(
        bootstrap_servers="b:9092", topics="orders", table_path="/t", table_name="orders", value_schema={"id": "string"}
    )
    assert listed == {(a.restype.name.lower(), a.name, a.operation.name) for a in sink_acls(config, "User:sink")}


def test_readme_is_a_front_door_and_every_link_of_the_guide_leads_somewhere():
    import re

    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300, "the README is the front door: reference material belongs in docs/"
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
    assert all(f"]({page})" in readme for page in pages), [page for page in pages if f"]({page})" not in readme]
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), ROOT / "benchmarks" / "results" / "README.md"]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", path.read_text()):
            if "://" in target:
                continue
            assert (path.parent / target).exists(), f"{path.relative_to(ROOT)} links {target}, which does not exist"
