"""The contract itself: Ledger accounting, build() and validate()."""

import json

import numpy as np
import pytest

from thruput.contract import Ledger, build, count_lines, newline_offsets, split_lines, validate
from thruput.errors import ContractError, ParseError


def _rtt_dataset(ledger):
    return build("rtt", {
        "seq": (("probe",), np.array([1, 2])),
        "rtt": (("probe",), np.array([0.5, np.nan])),
        "status": (("probe",), np.array(["reply", "lost"])),
        "timestamp": (("probe",), np.array([np.nan, np.nan])),
        "size": (("probe",), np.array([64.0, np.nan])),
        "ttl": (("probe",), np.array([64, -1])),
        "line": (("probe",), np.array([2, -1])),
    }, fmt="ping", tool="ping", ledger=ledger)


def test_ledger_counts_parsed_and_skipped_lines():
    ledger = Ledger(4)
    ledger.parsed(np.array([2, 3]))
    ledger.skip(1, "banner")
    ledger.skip(4, "blank")
    attrs = ledger.close()
    assert attrs["lines_parsed"] == 2
    assert attrs["lines_skipped"] == 2
    assert json.loads(attrs["skipped_reasons"]) == {"banner": 1, "blank": 1}


def test_ledger_names_the_first_unaccounted_line():
    ledger = Ledger(3, lines=["a", "garbage here", "c"])
    ledger.parsed([1, 3])
    with pytest.raises(ParseError) as info:
        ledger.close()
    assert info.value.line == 2
    assert "garbage here" in str(info.value)


def test_build_and_validate_round_trip():
    ledger = Ledger(2)
    ledger.skip(1, "banner")
    ledger.parsed(2)
    ds = validate(_rtt_dataset(ledger))
    assert ds["rtt"].attrs["units"] == "ms"
    assert ds.attrs["lines_total"] == 2


def test_validate_rejects_unprefixed_extras_and_wrong_units():
    ledger = Ledger(1)
    ledger.parsed(1)
    ds = _rtt_dataset(ledger)
    ds["mystery"] = ("probe", [1, 2], {"units": "1", "long_name": "x"})
    ds["rtt"].attrs["units"] = "s"
    with pytest.raises(ContractError, match="mystery.*|.*rtt"):
        validate(ds)


def test_split_lines_ignores_final_newline():
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\nb") == ["a", "b"]
    assert split_lines("") == []


@pytest.mark.parametrize("text", ["", "\n", "a", "a\n", "a\nb", "\n\nµ\n€x\n\n", "é" * 7 + "\n" + "b\n" * 5])
def test_count_lines_and_newline_offsets_agree_with_split_lines(text):
    assert count_lines(text) == len(split_lines(text))
    want = [i for i, c in enumerate(text) if c == "\n"]
    assert newline_offsets(text).tolist() == want
    assert newline_offsets(text, piece=3).tolist() == want    # pieces cut anywhere, non-ASCII too


def test_read_many_concatenates_runs_and_keeps_each_files_provenance(tmp_path):
    import hashlib
    import shutil

    import thruput
    from .conftest import DATA

    sources = [DATA / "iperf3_json" / n for n in ("3.12--tcp-P4.json", "3.12--tcp-R.json")]
    paths = []
    for i, src in enumerate(sources):
        paths.append(tmp_path / f"{i}.json")
        shutil.copy(src, paths[-1])
    ds = thruput.read_many(paths)
    singles = [thruput.read(p) for p in paths]
    assert ds.sizes["run"] == sum(s.sizes["run"] for s in singles)
    assert ds["record_file"].values.tolist() == [i for i, s in enumerate(singles) for _ in range(s.sizes["run"])]
    assert ds["file_sha256"].values.tolist() == [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    assert ds["throughput"].values.tolist() == [float(v) for s in singles for v in s["throughput"].values]
    assert ds.attrs["lines_total"] == sum(s.attrs["lines_total"] for s in singles)


def test_read_many_without_a_batch_parser_concatenates_single_reads():
    import thruput
    from .conftest import DATA

    paths = [p for p in sorted((DATA / "ping").glob("iputils--*.out"))][:2]
    ds = thruput.read_many(paths, format="ping")
    singles = [thruput.read(p) for p in paths]
    assert ds.sizes["probe"] == sum(s.sizes["probe"] for s in singles)
    assert ds["seq"].values.tolist() == [int(v) for s in singles for v in s["seq"].values]
    assert ds["file_path"].values.tolist() == [str(p) for p in paths]


def test_an_error_line_is_reported_once_not_again_as_unrecognised():
    ledger = Ledger(2, lines=["ok", "bad"])
    ledger.parsed(1)
    ledger.error(2, "bad row")
    with pytest.raises(ParseError) as info:
        ledger.close()
    assert info.value.errors == [(2, "bad row")]


def test_cut_off_skips_the_last_record_and_says_so():
    ledger = Ledger(2)
    ledger.parsed(1)
    ledger.cut_off(2, "row", ": 3 of 5 values")
    attrs = ledger.close()
    assert json.loads(attrs["skipped_reasons"]) == {"truncated row": 1}
    assert (attrs["truncated"], attrs["truncation"]) == (1, "last row (line 2) cut off: 3 of 5 values")


def test_build_keeps_an_object_array_of_str_as_it_is():
    """Issue 40: xarray would pass it through pandas, which makes a new str of every element
    (some 55 bytes each, where a reference to a shared one takes 8)."""
    names = np.array(["reply", "lost"], dtype=object)[np.array([0, 0, 1, 0])]
    ledger = Ledger(4)
    ledger.parsed([1, 2, 3, 4])
    n = len(names)
    ds = validate(build("rtt", {
        "seq": (("probe",), np.arange(n)), "rtt": (("probe",), np.full(n, 0.5)),
        "status": (("probe",), names), "timestamp": (("probe",), np.full(n, np.nan)),
        "size": (("probe",), np.full(n, 64)), "ttl": (("probe",), np.full(n, 64)),
        "line": (("probe",), np.arange(1, n + 1))}, fmt="ping", tool="ping", ledger=ledger))
    status = ds["status"].values
    assert status.dtype == object and status.tolist() == ["reply", "reply", "lost", "reply"]
    assert status[0] is status[1] is status[3] is names[0]
    assert ds["probe"].values.tolist() == [0, 1, 2, 3] and ds["probe"].dtype == np.int64
