"""Write the role notebooks' `parameters` cells and the bundle's job parameters from `SinkConfig` and `JobControls`.

    python tools/render_jobs.py          # `make jobs`: rewrites jobs/*.ipynb and resources/hudi_kafka_sink.job.yml

Settings are described once, by the comment beside each field of `SinkConfig` (nbs/00_sink.ipynb) and
`JobControls` (nbs/68_runtime.ipynb), and have their defaults there only: every parameter here is empty ("" or None),
which a job reads as "the default". tests/test_job_bundle.py checks that the files are what this writes."""

from __future__ import annotations

import inspect
import io
import json
import re
import textwrap
import tokenize
from pathlib import Path

import msgspec
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
ROLES = ("coordinator", "participant", "table_services")
JOB_FILE = ROOT / "resources" / "hudi_kafka_sink.job.yml"
COLUMN = 37  # where the comments start


def field_comments(cls) -> dict[str, str]:
    """The comment that describes each field in the source of the msgspec Struct `cls`: beside the field, or on the
    lines right above it when it is too long to fit beside."""
    comments, above, field = {}, [], None
    source = textwrap.dedent(inspect.getsource(cls))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        row, column = token.start
        if token.type == tokenize.COMMENT and column == 4 and not token.line[:4].strip():
            above.append(token.string.lstrip("#").strip())
        elif token.type == tokenize.COMMENT and field:
            comments[field] = token.string.lstrip("#").strip()
        elif token.type == tokenize.NAME and column == 4:
            field = token.string
            if above:
                comments[field] = " ".join(above)
            above = []
        elif token.type == tokenize.NEWLINE:
            field = None
        elif token.type == tokenize.NL and not token.line.strip():
            above = []
    missing = [f for f in cls.__struct_fields__ if f not in comments]
    assert not missing, f"{cls.__name__} fields without a comment to describe them: {missing}"
    return {f: comments[f] for f in cls.__struct_fields__}


def _parameter(field: msgspec.structs.FieldInfo, comment: str) -> str:
    "One typed line of a parameters cell: papermill documents it (--help-notebook) and casts -p values to its type."
    kind = {int: "int", float: "float", bool: "bool"}.get(field.type, "str")
    notes = [
        {list: "comma-separated", dict: "JSON"}.get(getattr(field.type, "__origin__", None), ""),
        "required" if field.required else "",
    ]
    notes = "; ".join(filter(None, notes))
    text = f"{field.name}: {kind} = {'None' if kind != 'str' else chr(34) * 2}"
    return f"{text:<{COLUMN - 1}} # {comment}{f' ({notes})' if notes else ''}"


def parameters_cell() -> str:
    "The `parameters` cell every role notebook carries: every setting of the sink, then the job's controls."
    from hudi_kafka_nb.config.sink import SinkConfig
    from hudi_kafka_nb.run.runtime import JobControls

    lines = [
        "# Written by `make jobs` from SinkConfig (nbs/00_sink.ipynb) and JobControls (nbs/68_runtime.ipynb): edit "
        "those.",
        '# Empty ("" or None) means the default there; papermill --help-notebook lists every parameter.',
    ]
    settings = field_comments(SinkConfig)
    lines += [_parameter(f, settings[f.name]) for f in msgspec.structs.fields(SinkConfig)]
    lines.append("# How this run of the job is controlled")
    controls = field_comments(JobControls)
    lines += [_parameter(f, controls[f.name]) for f in msgspec.structs.fields(JobControls)]
    return "\n".join(lines)


# the job controls (JobControls) a Databricks deployment sets for every task; the others (stop file, Spark master,
# metrics port) belong to local runs
BUNDLE_CONTROLS = ("log_level", "metrics_pushgateway")


def bundle_parameters(variables: dict) -> list[dict]:
    """The job's parameters: every setting of the sink, whose value is the bundle variable of that name where
    databricks.yml declares one (what a deployment chooses), else empty (the sink's default)."""
    from hudi_kafka_nb.config.sink import SinkConfig

    names = [*SinkConfig.__struct_fields__, *BUNDLE_CONTROLS]
    return [{"name": name, "default": f"${{var.{name}}}" if name in variables else ""} for name in names]


def bundle_variables() -> dict:
    return yaml.safe_load((ROOT / "databricks.yml").read_text())["variables"]


PARAMETERS_BLOCK = re.compile(r"(?ms)^(      parameters:\n)(.*?)(?=^      \w)")


def job_file_text() -> str:
    "resources/hudi_kafka_sink.job.yml with its `parameters:` block written from `bundle_parameters`."
    text = JOB_FILE.read_text()
    rows = [
        "        # written by `make jobs`: every setting of SinkConfig; a bundle variable of the same name gives its "
        "value",
        *(
            f"        - {{name: {p['name']}, default: {json.dumps(p['default'])}}}"
            for p in bundle_parameters(bundle_variables())
        ),
    ]
    assert PARAMETERS_BLOCK.search(text), f"{JOB_FILE} has no parameters: block"
    return PARAMETERS_BLOCK.sub(lambda m: m[1] + "\n".join(rows) + "\n", text, count=1)


def notebook_parameters_cell(path: Path) -> str:
    "The source of the notebook's one cell tagged `parameters`."
    (cell,) = [c for c in nbformat.read(path, as_version=4).cells if "parameters" in c.metadata.get("tags", [])]
    return cell.source


def write_notebooks():
    for role in ROLES:
        path = ROOT / "jobs" / f"{role}.ipynb"
        notebook = json.loads(path.read_text())  # as nbdev_clean keeps it: rewritten in the same layout
        (cell,) = [c for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", [])]
        cell["source"] = parameters_cell().splitlines(keepends=True)
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    write_notebooks()
    JOB_FILE.write_text(job_file_text())
