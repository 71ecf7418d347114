"""One output schema: docs/diagnosis.schema.json describes what the C++ JSON
writer (the one serializer) writes; the Python attributes, the type stubs, the
README's table and `diagnose --help` are held to it."""

import ast
import json
import math
import re
import subprocess

import jsonschema
import pytest

import gpudiag
from conftest import PUBLISHED_CORPUS, ROOT

SCHEMA = json.loads((ROOT / "docs" / "diagnosis.schema.json").read_text())
# Which part of the schema each bound type is.
TYPES = {"Diagnosis": SCHEMA, "Evidence": SCHEMA["$defs"]["evidence"],
         "Finding": SCHEMA["$defs"]["finding"], "LossReading": SCHEMA["$defs"]["reading"],
         "Trajectory": SCHEMA["$defs"]["trajectory"], "FailedWorker": SCHEMA["$defs"]["worker"],
         "LauncherReport": SCHEMA["$defs"]["launcher"],
         "Verdict": SCHEMA["properties"]["verdict"]}


def attribute(name):
    return "class_" if name == "class" else name


def corpus_logs():
    logs = sorted((ROOT / "corpus" / "logs").rglob("*.log"))
    logs += sorted((ROOT / "corpus" / "examples").glob("*.log"))
    if PUBLISHED_CORPUS.is_dir():
        logs += sorted((PUBLISHED_CORPUS / "corpus" / "logs").rglob("*.log"))
    return logs


def resolve(schema):
    ref = schema.get("$ref")
    if ref:
        return SCHEMA["$defs"][ref.rsplit("/", 1)[1]]
    for option in schema.get("anyOf", []):
        if "$ref" in option:
            return resolve(option)
    return schema


def same(value, wire):
    """A Python value against what the JSON writer wrote for it."""
    if isinstance(value, float) and not math.isfinite(value):
        return wire == ("nan" if math.isnan(value) else "inf" if value > 0 else "-inf")
    if isinstance(value, bool) or wire is None or isinstance(value, (str, int)):
        return value == wire and type(value) is type(wire)
    if isinstance(value, float):
        return isinstance(wire, float) and value == wire  # full precision, read back as a float
    if isinstance(value, dict):
        return value == wire
    return False


def check(obj, wire, schema, where):
    """Every field of the bound object equals the JSON's, walking the schema."""
    schema = resolve(schema)
    for name, sub in schema["properties"].items():
        if name not in wire:
            assert name == "path", f"{where}: {name} missing from the JSON"
            continue
        if name == "series":  # (step, loss) tuples; compared by the caller
            continue
        value, expected = getattr(obj, attribute(name)), wire[name]
        sub = resolve(sub)
        if expected is None or "properties" not in sub and sub.get("type") != "array":
            assert same(value, expected), f"{where}.{name}: {value!r} != {expected!r}"
        elif "properties" in sub:
            check(value, expected, sub, f"{where}.{name}")
        elif "items" in sub and "$ref" in sub["items"]:
            assert len(value) == len(expected), f"{where}.{name}"
            for i, (v, e) in enumerate(zip(value, expected)):
                check(v, e, sub["items"], f"{where}.{name}[{i}]")
        else:
            assert list(value) == expected, f"{where}.{name}"


@pytest.fixture(scope="module")
def diagnoses():
    out = []
    for path in corpus_logs():
        out.append((path, gpudiag.diagnose(path)))
    assert len(out) > 400
    return out


def test_every_corpus_diagnosis_is_valid_and_equal_in_every_form(diagnoses):
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for path, d in diagnoses:
        wire = json.loads(d.to_json())
        errors = [e.message for e in validator.iter_errors(wire)]
        assert not errors, f"{path}: {errors[:3]}"
        assert d.to_dict() == wire
        check(d, wire, SCHEMA, path.name)
        series = [[s, "nan" if math.isnan(l) else l] for s, l in d.trajectory.series]
        assert series == wire["trajectory"]["series"], path


def test_numbers_keep_full_precision():
    d = gpudiag.diagnose(b"step 29001 | loss 4.9999\nstep 29002 | loss 4.99987\nstep 29003 | loss 5\n")
    wire = json.loads(d.to_json())
    assert wire["trajectory"]["first"] == {"step": 29001, "loss": 4.9999, "line": 1, "step_reported": True}
    assert wire["trajectory"]["last"]["loss"] == 5.0 and isinstance(wire["trajectory"]["last"]["loss"], float)
    assert wire["trajectory"]["max_step"] == 29003
    assert '"step":29001' in d.to_json() and "2.9e+04" not in d.to_json()


def test_stubs_list_the_schema_fields():
    tree = ast.parse((ROOT / "python" / "gpudiag" / "_core.pyi").read_text())
    stubbed = {node.name: [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)]
               for node in tree.body if isinstance(node, ast.ClassDef)}
    for name, schema in TYPES.items():
        assert stubbed[name] == [attribute(p) for p in schema["properties"]], name


def test_bound_types_have_the_schema_fields():
    for name, schema in TYPES.items():
        cls = getattr(gpudiag, name)
        bound = [k for k, v in vars(cls).items() if isinstance(v, property)]
        assert bound == [attribute(p) for p in schema["properties"]], name


def test_readme_table_lists_the_schema_fields():
    readme = (ROOT / "README.md").read_text()
    table = readme.split("### JSON fields", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `(\w+)`", table, re.M)
    assert documented == list(SCHEMA["properties"])


def test_help_lists_the_schema_fields(cli):
    out = subprocess.run([cli, "diagnose", "--help"], capture_output=True, text=True).stdout
    listed = re.findall(r"^  (\w+) {2,}", out.split("JSON fields", 1)[1], re.M)
    assert listed == list(SCHEMA["properties"])


def test_taxonomy_document_is_generated_from_the_cards(cli):
    out = subprocess.run([cli, "taxonomy", "--format", "markdown"], capture_output=True, text=True,
                         check=True).stdout
    assert (ROOT / "docs" / "taxonomy.md").read_text() == out, \
        "docs/taxonomy.md is stale: gpudiag taxonomy --format markdown > docs/taxonomy.md"
    for c in gpudiag.taxonomy():
        assert f"| `{c.id}` |" in out


def test_no_class_id_names_behaviour_in_the_core():
    """The core reads class behaviour from the cards: no class id is a string
    literal in the library, the command line or the native bindings."""
    sources = [p for d in ("libgpudiag", "cli") for p in (ROOT / d).rglob("*")
               if p.suffix in {".cpp", ".hpp", ".in"}] + [ROOT / "python" / "_core.cpp"]
    assert len(sources) > 20
    ids = {c.id for c in gpudiag.taxonomy()}
    found = [(p.relative_to(ROOT), lit) for p in sources
             for lit in re.findall(r'"([a-z0-9_]+)"', p.read_text()) if lit in ids]
    assert not found
