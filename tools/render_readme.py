"""Render README.md from the markdown cells of nbs/index.ipynb (Quarto, which nbdev would use, cannot be installed
here)."""

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTICE = "<!-- Rendered from nbs/index.ipynb by `make readme`: edit the notebook, not this file. -->"


def render() -> str:
    notebook = nbformat.read(ROOT / "nbs" / "index.ipynb", as_version=4)
    cells = [c.source.strip() for c in notebook.cells if c.cell_type == "markdown"]
    return "\n\n".join([NOTICE] + cells) + "\n"


if __name__ == "__main__":
    print(render(), end="")
