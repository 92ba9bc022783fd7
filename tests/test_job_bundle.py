"""The job notebooks and the Databricks bundle agree: same roles, same parameter names, paths that exist, and a bundle
the Databricks CLI's own schema accepts (validated offline: `make setup` fetches the schema from the CLI's Go module).
"""

import ast
import copy
import json
import re
import sys
from pathlib import Path

import jsonschema
import msgspec
import nbformat
import yaml

from hudi_kafka_nb.config.sink import SinkConfig
from hudi_kafka_nb.run.runtime import JOB_CONTROLS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from render_jobs import ROLES, bundle_parameters, job_file_text, notebook_parameters_cell, parameters_cell  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / ".jars" / "databricks-bundle" / "jsonschema.json"


def notebook_parameters(path):
    """Names assigned in the notebook's cell tagged `parameters` (there must be exactly one)."""
    cells = [c for c in nbformat.read(path, as_version=4).cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{path} needs exactly one cell tagged parameters"
    body = ast.parse(cells[0].source).body
    assert all(isinstance(node, ast.AnnAssign) for node in body), (
        "every parameter is typed, so papermill --help-notebook documents it"
    )
    return {node.target.id for node in body}


def bundle_files():
    """databricks.yml and every file it includes, each as (path, parsed YAML)."""
    root = yaml.safe_load((ROOT / "databricks.yml").read_text())
    included = [p for pattern in root.get("include", []) for p in sorted(ROOT.glob(pattern))]
    assert included, "databricks.yml includes the resource files"
    return [(ROOT / "databricks.yml", root)] + [(p, yaml.safe_load(p.read_text())) for p in included]


def the_job():
    """The sink's job and the file that declares it (paths in it are relative to that file)."""
    (found,) = [
        (path, job)
        for path, content in bundle_files()
        for job in content.get("resources", {}).get("jobs", {}).values()
        if "tasks" in job
    ]
    return found


def schema_errors(content) -> list[str]:
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(content)]


def test_role_notebooks_expose_every_setting_and_control_as_generated():
    """Each role notebook's parameters cell is what `make jobs` writes from SinkConfig and JobControls: every setting,
    every control, no default of its own."""
    assert set(SinkConfig.__struct_fields__) | set(JOB_CONTROLS) == notebook_parameters(
        ROOT / "jobs" / "coordinator.ipynb"
    )
    for role in ROLES:
        assert notebook_parameters_cell(ROOT / "jobs" / f"{role}.ipynb") == parameters_cell(), (
            f"jobs/{role}.ipynb: run `make jobs`"
        )


def test_every_bundle_file_is_valid_against_the_databricks_cli_schema():
    assert SCHEMA.exists(), f"{SCHEMA} is missing: run `make setup`"
    for path, content in bundle_files():
        assert schema_errors(content) == [], path
    # the check has teeth: a misspelt task field is an error
    path, _ = the_job()
    broken = copy.deepcopy(dict(bundle_files())[path])
    next(iter(broken["resources"]["jobs"].values()))["tasks"][0]["notebook_tsk"] = {}
    assert schema_errors(broken)


def test_bundle_declares_the_roles_with_the_notebooks_parameters():
    bundle = yaml.safe_load((ROOT / "databricks.yml").read_text())
    assert {"dev", "prod"} <= set(bundle["targets"])
    path, job = the_job()
    job_parameters = {p["name"] for p in job["parameters"]}
    tasks = {t["task_key"]: t for t in job["tasks"]}
    roles = [Path(t["notebook_task"]["notebook_path"]).stem for t in tasks.values()]
    assert roles.count("coordinator") == 1 and roles.count("participant") >= 2
    # every setting is a job parameter, from a bundle variable of its name or empty (the sink's default), as `make jobs`
    # writes it
    assert job["parameters"] == bundle_parameters(bundle["variables"]) and path.read_text() == job_file_text(), (
        "run `make jobs`"
    )
    job_defaults = {p["name"]: p.get("default") for p in job["parameters"]}
    # the targets put the table on object storage, where Hudi's file-system lock is not safe: the coordinator runs the
    # table services in its commits (one writer, the default), and no table-services task runs beside it without a lock
    # provider
    inline = next(f.default for f in msgspec.structs.fields(SinkConfig) if f.name == "table_services")
    assert job_defaults["table_services"] == "" and inline == "inline" and roles.count("table_services") == 0
    assert job_defaults.get("storage_options") == "${var.storage_options}"
    # defaults live in SinkConfig only: a variable named like a setting gives a deployment's choice, or nothing
    defaults = {f.name: f.default for f in msgspec.structs.fields(SinkConfig) if not f.required}
    for name, variable in bundle["variables"].items():
        if name in defaults and variable.get("default", "") != "":
            assert yaml.safe_load(str(variable["default"])) != defaults[name], (
                f"variable {name} repeats the sink's default"
            )
    assert all(
        target["variables"]["table_path"].startswith("${var.storage_root}/") for target in bundle["targets"].values()
    )
    for task in tasks.values():
        notebook = (path.parent / task["notebook_task"]["notebook_path"]).resolve()
        assert notebook.exists(), notebook
        names = notebook_parameters(notebook)
        assert job_parameters <= names, f"{notebook.name} lacks job parameters {job_parameters - names}"
        assert set(task["notebook_task"].get("base_parameters", {})) <= names
        assert task.get("depends_on") is None, "roles run side by side"
        for library in task["libraries"]:
            if "whl" in library:
                assert (path.parent / library["whl"]).parent.resolve() == ROOT / "dist"
    ids = [
        t["notebook_task"].get("base_parameters", {}).get("role_id")
        for t in tasks.values()
        if "participant" in t["notebook_task"]["notebook_path"]
    ]
    assert None not in ids and len(set(ids)) == len(ids), "participants need distinct ids"


def test_bundle_variables_and_versions_match_the_project():
    files = bundle_files()
    variables = files[0][1]["variables"]
    for path, _ in files:
        for name in re.findall(r"\$\{var\.(\w+)\}", path.read_text()):
            assert name in variables, f"{path.name} uses undeclared variable {name}"
    hudi = re.search(r"<hudi.version>(.+?)</hudi.version>", (ROOT / "maven" / "hudi" / "pom.xml").read_text()).group(1)
    assert variables["hudi_version"]["default"] == hudi, "the cluster gets the Hudi bundle the tests ran"
    path, job = the_job()
    assert all("hudi-spark3.5-bundle_2.12" in json.dumps(t["libraries"]) for t in job["tasks"])
    assert (
        variables["spark_version"]["default"].startswith("15.4.")
        and "scala2.12" in variables["spark_version"]["default"]
    ), "Databricks Runtime 15.4 LTS is Spark 3.5 on Scala 2.12, what the Hudi bundle is built for"
    # a secret reaches the job only by reference
    for target in files[0][1]["targets"].values():
        kafka = json.loads(target.get("variables", {}).get("kafka") or "{}")
        assert all(v.startswith("${") for k, v in kafka.items() if "password" in k)
