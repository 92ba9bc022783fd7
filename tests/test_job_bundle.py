"""The job notebooks and the Databricks bundle agree: same roles, same parameter names, paths that exist."""
import ast
from pathlib import Path
import nbformat
import yaml
from hudi_kafka_nb.config import SinkConfig
from hudi_kafka_nb.runtime import JOB_CONTROLS

ROOT = Path(__file__).resolve().parents[1]


def notebook_parameters(path):
    """Names assigned in the notebook's cell tagged `parameters` (there must be exactly one)."""
    cells = [c for c in nbformat.read(path, as_version=4).cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{path} needs exactly one cell tagged parameters"
    body = ast.parse(cells[0].source).body
    assert all(isinstance(node, ast.AnnAssign) for node in body), "every parameter is typed, so papermill --help-notebook documents it"
    return {node.target.id for node in body}


def test_role_notebooks_expose_every_setting():
    for role in ("coordinator", "participant"):
        names = notebook_parameters(ROOT / "jobs" / f"{role}.ipynb")
        assert {"bootstrap_servers", "topics", "table_path", "table_name", "commit_interval_s", "write_timeout_s",
                "value_schema", "role_id", "stop_file"} <= names
        assert names <= set(SinkConfig.__struct_fields__) | set(JOB_CONTROLS), names - set(SinkConfig.__struct_fields__)


def test_bundle_declares_the_roles_with_the_notebooks_parameters():
    bundle = yaml.safe_load((ROOT / "databricks.yml").read_text())
    assert {"dev", "prod"} <= set(bundle["targets"])
    (job,) = bundle["resources"]["jobs"].values()
    tasks = {t["task_key"]: t for t in job["tasks"]}
    roles = [Path(t["notebook_task"]["notebook_path"]).stem for t in tasks.values()]
    assert roles.count("coordinator") == 1 and roles.count("participant") >= 2
    for task in tasks.values():
        notebook = ROOT / task["notebook_task"]["notebook_path"]
        assert notebook.exists(), notebook
        assert set(task["notebook_task"]["base_parameters"]) <= notebook_parameters(notebook)
        assert task.get("depends_on") is None, "roles run side by side"
    ids = [t["notebook_task"]["base_parameters"].get("role_id") for t in tasks.values() if "participant" in t["notebook_task"]["notebook_path"]]
    assert len(set(ids)) == len(ids), "participants need distinct ids"
    variables = set(bundle["variables"])
    for value in job["tasks"][0]["notebook_task"]["base_parameters"].values():
        for name in __import__("re").findall(r"\$\{var\.(\w+)\}", str(value)): assert name in variables
