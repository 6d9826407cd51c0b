"""thruput.campaign.runs: runs.csv cut into rows by pandas (pyarrow) or, for what it cannot
number by line, by the csv module; appended and rewritten."""

from thruput.campaign import runs

NAMES = ("a", "b", "c")


def test_bulk_and_row_by_row_give_the_same_rows_and_lines():
    body = "1,x, y \n2,,z\n"
    assert runs.bulk_columns(body, NAMES) == [["1", "2"], ["x", ""], ["y", "z"]]
    assert runs.records(body, NAMES) == [(2, ["1", "x", "y"]), (3, ["2", "", "z"])]
    ragged = body + "3,only two\n"       # (pyarrow refuses it: read row by row)
    assert runs.bulk_columns(ragged, NAMES) is None
    assert runs.records(ragged, NAMES)[2] == (4, ["3", "only two"])
    blank = "1,x,y\n\n2,x,z\n"
    assert runs.bulk_columns(blank, NAMES) is None
    assert runs.records(blank, NAMES) == [(2, ["1", "x", "y"]), (3, []), (4, ["2", "x", "z"])]
    assert runs.records("", NAMES) == []


def test_header_append_and_rewrite(tmp_path):
    assert runs.split_header("") == (None, 0)
    assert runs.split_header(" a ,b,c\n1,2,3\n") == (NAMES, 8)
    runs.append_rows(tmp_path, [["1", "x", "y"]], NAMES)
    runs.append_rows(tmp_path, [{"a": 2, "b": None, "c": "z,w"}], NAMES)
    assert (tmp_path / "runs.csv").read_text() == 'a,b,c\n1,x,y\n2,,"z,w"\n'
    runs.write_rows(tmp_path, [["3", "", ""]], NAMES)
    assert (tmp_path / "runs.csv").read_text() == "a,b,c\n3,,\n"
    assert not (tmp_path / "runs.csv.part").exists()


def test_paths_must_stay_inside_the_campaign(tmp_path):
    assert runs.path_problem("runs/a.json") is None
    assert "absolute" in runs.path_problem("/etc/passwd")
    assert "goes up" in runs.path_problem("runs/../../x")
    (tmp_path / "out").symlink_to("/etc")
    assert "leads out" in runs.escapes(tmp_path, "out/passwd")
