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


def test_no_study_has_code_of_its_own():
    """The study pages and their tables hold no seed: no "000".."004" string, no function or
    name per study (seed_000_hosts, _published_001, ...). Each study is its folder's data."""
    found = []
    for rel in ("report/studies.py", "studies/tables.py"):
        tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"00\d", node.value):
                found.append(f"{rel}:{node.lineno}: {node.value!r}")
            name = getattr(node, "name", None) or getattr(node, "id", None)
            if isinstance(name, str) and re.search(r"(^|_)00\d(_|$)", name):
                found.append(f"{rel}:{node.lineno}: {name}")
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
    # sizes and exponents are bounded: refused before they are computed, never a hang,
    # an OverflowError or a MemoryError
    ("9**9**9", "exponent 3.8742e+08 beyond 1000"),
    ("10**400", "beyond 1e+300"),
    ("10.0**400", "beyond 1e+300"),
    ("'a' * 10**10", "only a function's argument"),
    ("(10**10) * 'a'", "only a function's argument"),
    ("1e200 * 1e200", "a result beyond 1e+300"),
    ("1" + "0" * 400, "a result beyond 1e+300"),
    ("(-8) ** 0.5", "a complex result"),
    ("sqrt(-1)", "math domain error"),
    ("-(" * 300 + "1" + ")" * 300, "too many nested parentheses"),
    ("-" * 1990 + "1", "nested too deeply"),
    ("1+" * 1500 + "1", "longer than 2000"),
    ("min('" + "a" * 200 + "', 1)", "longer than 100 characters"),
])
def test_evaluate_rejects(formula, message):
    with pytest.raises(formulas.FormulaError, match=re.escape(message)):
        formulas.evaluate(formula, {"x": 3.0})


def test_names_of_a_deeply_nested_formula():
    with pytest.raises(formulas.FormulaError, match="nested too deeply"):
        formulas.names("-" * 1990 + "1")


@pytest.mark.parametrize("formula", ["9**9**9", "10**400", "'a'*10**10"])
def test_hostile_formula_in_a_study_is_a_study_error_naming_the_claim(tmp_path, monkeypatch, formula):
    """A formula that passes the schema but cannot be computed stops the ledger with a
    StudyError naming the file, the check and the claim (never a hang or a raw error)."""
    (tmp_path / "published").mkdir()
    (tmp_path / "published" / "seed_009.csv").write_text(_CSV)
    (tmp_path / "studies" / "seed_009").mkdir(parents=True)
    (tmp_path / "studies" / "seed_009" / "claims.yaml").write_text(
        yaml.safe_dump({"checks": [{"claim": "009-sum", "derive": formula}]}))
    monkeypatch.setattr(studies, "STUDY_DIR", tmp_path / "studies")
    monkeypatch.setattr(studies, "SEEDS", ("009",))
    studies._load.cache_clear()
    try:
        with pytest.raises(studies.StudyError, match=r"seed_009/claims\.yaml: check 1: '009-sum': formula"):
            reproduce.build_ledger(published.load(path=tmp_path / "published"))
    finally:
        studies._load.cache_clear()


@pytest.mark.parametrize("text, message", [
    ("checks:\n- !!python/object:os.system {claim: 009-a}\n", "not plain YAML: could not determine a constructor"),
    ("checks:\n- claim: 009-a\n\tinput: true\n", "not plain YAML"),
    ("- a list\n", "a mapping of keys is expected, not a list"),
])
def test_claims_file_that_is_not_plain_yaml(tmp_path, monkeypatch, text, message):
    folder = tmp_path / "seed_009"
    folder.mkdir()
    (folder / "claims.yaml").write_text(text)
    monkeypatch.setattr(studies, "STUDY_DIR", tmp_path)
    studies._load.cache_clear()
    try:
        with pytest.raises(studies.StudyError, match=r"seed_009/claims\.yaml: " + re.escape(message)):
            studies.checks("009")
    finally:
        studies._load.cache_clear()


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
    ({"claim": "009-a", "derive": "x", "inputs": "009-b"}, "'inputs' is a mapping"),
    ({"claim": "009-a", "derive": "x", "inputs": {"x": "009-b"}, "restates": True}, "'restates' says where"),
])
def test_schema_errors_name_file_and_claim(tmp_path, monkeypatch, check, message):
    with pytest.raises(studies.StudyError, match=r"seed_009/claims\.yaml: check 1: '009-a': .*" + re.escape(message)):
        _write(tmp_path, monkeypatch, [check])


def test_interpreter_knows_every_kind():
    assert set(reproduce._RUN) == set(studies.KINDS)


def test_status_meanings_are_complete():
    assert list(reproduce.STATUS_MEANING) == list(reproduce.STATUSES)
    assert set(reproduce.COUNTED) == set(reproduce.STATUSES) - {"bound", "input", "not-reproducible"}
    assert set(studies.JUDGEMENTS) < set(reproduce.STATUSES) and "reproduced" not in studies.JUDGEMENTS


_CSV = """id,seed,section,quote,value,unit,measures,statistic,src,dst,window,streams,tool,date,group,config,note
009-one,009,s,q,1,Mbit/s,throughput,value,,,,,,,,,
009-two,009,s,q,2,Mbit/s,throughput,value,,,,,,,,,
009-sum,009,s,q,3,Mbit/s,throughput,value,,,,,,,,,
009-sum-bad,009,s,q,3.5,Mbit/s,throughput,value,,,,,,,,,
009-mbyte,009,s,q,0.125,MByte/s,throughput,value,,,,,,,,,
009-oc3,009,s,q,155.52,Mbit/s,capacity,nominal,,,,,,,,,
009-rtt,009,s,q,10,ms,rtt,min,,,,,,,,,
009-peak,009,s,q,60,Mbit/s,throughput,max,,,,,,,,,
009-floor,009,s,q,40,Mbit/s,throughput,min,,,,,,,,,
009-copy,009,s,q,2.5,Mbit/s,throughput,value,,,,,,,,,
009-monday,009,s,q,,datetime,event_date,value,,,,,,2001-01-01,,weekday=Monday,
009-earlier,009,s,q,,datetime,event_date,value,,,,,,2000-12-31,,,
009-slope,009,s,q,0.0286,us/byte,latency_slope,value,,,,,,,,,
009-rate,009,s,q,11.8,Mbit/s,throughput,value,,,,,,,,,
009-size,009,s,q,1.6,MB,size,value,,,,,,,,,
009-time,009,s,q,1.1,s,duration,value,,,,,,,,,
009-typo,009,s,q,64,MiB,window,value,,,,,,,,,
009-untouched,009,s,q,7,Mbit/s,throughput,value,,,,,,,,,
009-approx,009,s,q,2.05,Mbit/s,throughput,value,,,,,,,,,
009-half,009,s,1 or 0.5 of 2,0.5,1,ratio,value,,,,,,,,,
009-part,009,s,1 or 0.5 of 2,1,1,ratio,value,,,,,,,,,
009-whole,009,s,1 or 0.5 of 2,2,1,ratio,value,,,,,,,,,
009-said,009,s,q,1.5,Mbit/s,throughput,value,,,,,,,,,
009-line,009,s,q,0.9,Gbit/s,throughput,value,,,,,,,,,
"""
# every row its own quote but the three of one sentence
_CSV = "\n".join(line.replace(",s,q,", f",s,quote of {line.split(',')[0]},") for line in _CSV.split("\n"))

_CHECKS = [
    {"claim": "009-sum", "derive": "a + b", "inputs": {"a": "009-one", "b": "009-two"}},
    {"claim": "009-sum-bad", "derive": "a + b", "inputs": {"a": "009-one", "b": "009-two"}},
    {"claim": "009-mbyte", "derive": "x", "inputs": {"x": "009-one"}},
    {"claim": "009-oc3", "derive": "OC3_BPS"},
    {"claim": "009-untouched", "derive": 7, "unit": "Mbit/s"},      # a bare number is a constant
    {"claim": "009-peak", "at_most": "window_limited_throughput(65536, rtt)", "inputs": {"rtt": "009-rtt"}},
    {"claim": "009-floor", "at_least": "10e6"},
    {"claim": "009-copy", "same_as": "009-two", "fails": "erratum"},
    {"claim": "009-approx", "same_as": "009-two", "tolerance": {"rel": 0.05}},
    {"claim": "009-monday", "weekday": True},
    {"claim": "009-earlier", "after": "009-monday"},
    {"claim": "009-slope", "model": "2 * bus_time(32, PCI33_HZ) + link_time(GIGE_BPS)", "unit": "s/byte"},
    {"claim": "009-rate", "derive": "size * 8 / time", "inputs": {"size": "009-size [MiB]", "time": "009-time"},
     "unit": "bit/s", "tolerance": "inputs"},
    {"claim": "009-one", "input": True},
    {"claim": "009-two", "input": True},
    {"claim": "009-typo", "judgement": "erratum", "derived": "64 / 1024", "unit": "MiB",
     "note": "64 KiB is meant"},
    # the arithmetic of its own sentence (same quote), a declared restatement, a physical limit
    {"claim": "009-half", "derive": "part / whole", "inputs": {"part": "009-part", "whole": "009-whole"}},
    {"claim": "009-said", "derive": "(a + b) / 2", "inputs": {"a": "009-one", "b": "009-two"},
     "restates": "the sentence prints both"},
    {"claim": "009-line", "at_most": "GIGE_BPS"},
]


def test_every_kind_of_check(tmp_path, monkeypatch):
    """A made-up study 009 with one check of each kind: each verdict is what its data say."""
    (tmp_path / "published").mkdir()
    (tmp_path / "published" / "seed_009.csv").write_text(_CSV)
    (tmp_path / "studies" / "seed_009").mkdir(parents=True)
    (tmp_path / "studies" / "seed_009" / "claims.yaml").write_text(yaml.safe_dump({"checks": _CHECKS}))
    monkeypatch.setattr(studies, "STUDY_DIR", tmp_path / "studies")
    monkeypatch.setattr(studies, "SEEDS", ("009",))
    studies._load.cache_clear()
    try:
        led = reproduce.build_ledger(published.load(path=tmp_path / "published")).set_index("claim")
    finally:
        studies._load.cache_clear()
    got = {c: (r["status"], bool(r["judgement"])) for c, r in led.iterrows()}
    assert got == {
        "009-one": ("input", False), "009-two": ("input", False),
        "009-sum": ("reproduced", False),            # 1 + 2 from two other published figures
        "009-sum-bad": ("differs", False),           # 3.5 is not 3 within +-0.05
        "009-mbyte": ("consistent", False),          # the same figure in another unit
        "009-oc3": ("consistent", False),            # a standard, no published input
        "009-peak": ("differs", False),              # 60 > 64 KiB / 10 ms = 52.4 Mbit/s
        "009-floor": ("bound", False),               # 40 >= 10 Mbit/s: a limit no published figure enters
        "009-line": ("bound", False),                # 0.9 Gbit/s <= GigE
        "009-half": ("consistent", False),           # 1 / 2 from its own sentence's numbers
        "009-said": ("consistent", False),           # declared: its own sentence prints the inputs
        "009-part": ("not-reproducible", False), "009-whole": ("not-reproducible", False),
        "009-copy": ("erratum", False),              # 2.5 is not 2, and the check says that is an erratum
        "009-approx": ("consistent", False),         # 2.05 is 2 within 5%
        "009-monday": ("consistent", False),         # 2001-01-01 was a Monday
        "009-earlier": ("erratum", False),           # not after 009-monday
        "009-slope": ("measured-vs-model", False),
        "009-rate": ("reproduced", False),           # 1.6 MiB / 1.1 s = 12.2; 11.8 within the inputs' rounding
        "009-typo": ("erratum", True),
        "009-untouched": ("consistent", False),      # 7 Mbit/s, a constant: not a reproduction
        # used as inputs, but nothing checks them and no check declares them `input`
        "009-rtt": ("not-reproducible", False), "009-size": ("not-reproducible", False),
        "009-time": ("not-reproducible", False),
    }
    assert led.at["009-peak", "derived_value"] == pytest.approx(65536 * 8 / 0.01 / 1e6)
    assert led.at["009-mbyte", "note"].startswith("x = 0.125 (within +-0.0005); the same figure as 009-one")
    assert led.at["009-slope", "derived_value"] == pytest.approx(2 / 132 + 0.008)
    assert led.at["009-slope", "note"].startswith("measured 0.0286, the source's model")
    assert led.at["009-typo", "derived_value"] == 0.0625
    assert led.at["009-sum", "inputs"] == "009-one,009-two"
    assert "arithmetic of the source checked, not a reproduction: its inputs are printed in the same text" \
        in led.at["009-half", "note"]
    assert "not a reproduction: the sentence prints both" in led.at["009-said", "note"]
