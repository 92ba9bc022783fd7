"""README.md says what nbs/index.ipynb says, and gives the two commands CI and users run."""
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
