"""thruput.studies: the source studies as data (claims.yaml, page.yaml) and the formula evaluator."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

import thruput
from thruput import published, reproduce, studies
from thruput.studies import formulas

SRC = Path(thruput.__file__).parent


@pytest.fixture(scope="module")
def pub():
    return published.load()


def test_one_folder_per_study():
    assert studies.SEEDS == ("000", "001", "002", "003", "004")
    for seed in studies.SEEDS:
        folder = studies.STUDY_DIR / f"seed_{seed}"
        assert (folder / "claims.yaml").is_file() and (folder / "page.yaml").is_file()


@pytest.mark.parametrize("seed", ["000", "001", "002", "003", "004"])
def test_every_check_evaluates(pub, seed):
    """Every declared check names existing claims, and every formula evaluates to a finite number."""
    ids = set(pub["id"])
    si = pub.set_index("id")["value_si"]
    checks = studies.checks(seed)
    assert checks
    for check in checks:
        assert check["claim"] in ids, check
        kind = studies.kind(check)
        inputs = {}
        for name, spec in (check.get("inputs") or {}).items():
            claim, unit = studies.parse_input(spec)
            assert claim in ids, (check["claim"], spec)
            inputs[name] = si[claim]
        for key in ("same_as", "after"):
            if key in check:
                assert check[key] in ids, check
        formula = check.get(kind) if kind in ("derive", "at_most", "at_least", "model") else check.get("derived")
        if formula is not None:
            value = formulas.evaluate(formula, inputs)
            assert value == value and abs(value) != float("inf"), check


def test_no_claim_id_literal_in_library_code(pub):
    """Claim ids (and group ids) live in the studies' data, not in src/thruput/**/*.py."""
    ids = set(pub["id"]) | set(pub["group"]) - {""}
    pattern = re.compile(r"\b00[0-4]-[a-z0-9]")
    found = []
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if node.value in ids or pattern.search(node.value):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value[:40]!r}")
    assert found == []


def test_page_link():
    assert studies.page_link("0") == ("Study 000: Throughput between Tersk03 and Kangadata02 (SLAC, 2001)",
                                      "study-000.html")
    assert studies.page_link(3, prefix="../")[1] == "../study-003.html"
    with pytest.raises(studies.StudyError, match="no study '007'.*known: 000, 001, 002, 003, 004"):
        studies.page_link(7)


def test_page_claims_exist(pub):
    """Every claim a page names (in lists, ``claim`` keys and templates) is published."""
    ids = set(pub["id"])
    found = []

    def walk(node):
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif isinstance(node, str) and re.fullmatch(r"00[0-4]-[\w.-]+", node) and not node.endswith("-"):
            found.append(node)

    for seed in studies.SEEDS:
        walk({k: v for k, v in studies.page(seed).items() if k != "text"})
    groups = set(pub["group"])
    prefixes = ("001-coal-rx",)
    missing = [c for c in found if c not in ids and c not in groups and not c.startswith(prefixes)]
    assert missing == []
    assert len(found) > 60


@pytest.mark.parametrize("formula, value", [
    ("2 * x + 1", 7.0),
    ("-x ** 2", -9.0),
    ("window_limited_throughput(65536, rtt)", 65536 * 8 / 0.05),
    ("gige_goodput(1500, 'udp')", 1e9 * 1472 / 1538),
    ("OC3_BPS / 1e6", 155.52),
    ("round_sig(1234.5, 2)", 1200.0),
])
def test_evaluate(formula, value):
    assert formulas.evaluate(formula, {"x": 3.0, "rtt": 0.05}) == pytest.approx(value)


@pytest.mark.parametrize("formula, message", [
    ("__import__('os')", "unknown function '__import__'"),
    ("__import__('os').system('true')", "is not allowed"),
    ("open('/etc/passwd')", "unknown function 'open'"),
    ("x.real", "is not allowed"),
    ("[x for x in ()]", "is not allowed"),
    ("y + 1", "unknown name 'y'"),
    ("x +", "does not parse"),
    ("1 / 0", "division by zero"),
    ("'text'", "a string, not a number"),
    ("min(x, k=1)", "is not allowed"),
])
def test_evaluate_rejects(formula, message):
    with pytest.raises(formulas.FormulaError, match=re.escape(message)):
        formulas.evaluate(formula, {"x": 3.0})


def _write(tmp_path, monkeypatch, checks):
    folder = tmp_path / "seed_009"
    folder.mkdir()
    (folder / "claims.yaml").write_text(yaml.safe_dump({"checks": checks}))
    monkeypatch.setattr(studies, "STUDY_DIR", tmp_path)
    studies._load.cache_clear()
    try:
        return studies.checks("009")
    finally:
        studies._load.cache_clear()


@pytest.mark.parametrize("check, message", [
    ({"claim": "009-a", "judgement": "reproduced", "note": "looks right"}, "reproduced must be computed"),
    ({"claim": "009-a", "judgement": "consistent"}, "needs its reasoning"),
    ({"claim": "009-a", "derive": "x * 2"}, "undeclared inputs ['x']"),
    ({"claim": "009-a", "derive": "x", "at_most": "x", "inputs": {"x": "009-b"}}, "needs exactly one of"),
    ({"claim": "009-a", "derive": "x", "inputs": {"x": "not a claim"}}, "is not '<claim id>'"),
    ({"claim": "009-a", "input": True, "colour": "red"}, "unknown keys ['colour']"),
])
def test_schema_errors_name_file_and_claim(tmp_path, monkeypatch, check, message):
    with pytest.raises(studies.StudyError, match=r"seed_009/claims\.yaml: check 1: '009-a': .*" + re.escape(message)):
        _write(tmp_path, monkeypatch, [check])


def test_status_meanings_are_complete():
    assert list(reproduce.STATUS_MEANING) == list(reproduce.STATUSES)
    assert set(reproduce.COUNTED) == set(reproduce.STATUSES) - {"input", "not-reproducible"}
    assert set(studies.JUDGEMENTS) < set(reproduce.STATUSES) and "reproduced" not in studies.JUDGEMENTS
