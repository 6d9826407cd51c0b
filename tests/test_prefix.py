

def test_read_many_of_wrapped_logs_keeps_each_files_lines_and_checks():
    """read_many over wrapped logs: each file stripped, its lines its own, the consistency
    records of every file kept (named by file)."""
    paths = [DATA / "wrapped" / "recorded" / name
             for name in ("ping--bracket-datetime.out", "ping--start-end-bracket-datetime.out")]
    ds = thruput.read_many(paths)
    singles = [thruput.read(p) for p in paths]
    assert ds.sizes["probe"] == sum(s.sizes["probe"] for s in singles)
    np.testing.assert_array_equal(ds["line"].values,
                                  np.concatenate([s["line"].values for s in singles]))
    np.testing.assert_array_equal(ds["timestamp"].values,
                                  np.concatenate([s["timestamp"].values for s in singles]))
    checks = json.loads(ds.attrs["consistency"])
    assert len(checks) == sum(len(json.loads(s.attrs["consistency"])) for s in singles)
    assert all(c["check"].startswith(str(paths[0]) + ": ") for c in checks[:5])
    assert ds.attrs["consistent"] == 1
    assert json.loads(ds.attrs["skipped_reasons"])["wrapper line: Start time"] == 1
