"""Hostile files beyond the readers' lines: what a path is, campaign files, archives, JSON
shapes, huge and sparse files (issue 57). Beside :mod:`tests.hostile`'s line-level fuzzer.

Each strategy makes seeded cases in a scratch folder and runs what thruput does with them
(``thruput.read``, ``thruput inspect``, ``open_campaign`` and ``campaign check``, a monitor
import, the bounded YAML and JSON loaders). A case's outcome is ``read`` (it returned),
``refused`` (a ThruputError whose message names the file), ``unnamed`` (a ThruputError
that does not), ``crash: ...`` (anything else), ``hang`` (past :data:`BOUND_S`) or
``outside`` (a file outside the case's folder was opened: Python's ``open`` audit events
are watched). The child process's peak resident set is recorded per strategy.

Run as ``python -m tests.hostile_files [STRATEGY ...] [--count N] [--seed S] [--heavy]``:
one JSON line per case, then one ``{"strategy", "peak_mb", ...}`` line per strategy.
``--heavy`` makes the sizes the issue measured (a 10 GB sparse log, 30 MB of blank lines,
a streamed 400 MB line, a .tgz of 20,000 members); without it they are small, for CI.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import resource
import shutil
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from .conftest import DATA

#: Seconds one case may take (twice that at the heavy sizes: 20,000 archive members take
#: 50 s on a loaded 2-core machine): only a hang or a quadratic step misses it.
BOUND_S = 60
STRATEGIES = ("paths", "campaign", "archives", "json", "huge")
SWEEP = DATA / "campaigns" / "loopback-mini"
MONITOR = DATA / "campaigns" / "monitor-loopback"
PING = DATA / "ping" / "iputils--loopback-c5.out"

_opened = []


def _audit(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _opened.append(os.fsdecode(args[0]))


def _outcome(action, names, bound=BOUND_S):
    """Run ``action()``; its outcome (see the module's doc) and seconds."""
    from thruput.errors import ReaderBug, ThruputError

    start = time.perf_counter()
    try:
        action()
        outcome = "read"
    except ReaderBug as exc:
        outcome = f"crash: {exc}"[:300]
    except ThruputError as exc:
        outcome = "refused" if any(str(n) in str(exc) for n in names) else f"unnamed: {exc}"[:300]
    except Exception as exc:  # noqa: BLE001 - what the harness looks for
        import traceback
        where = traceback.extract_tb(exc.__traceback__)[-1]
        outcome = f"crash: {type(exc).__name__}: {str(exc)[:200]} at {Path(where.filename).name}:{where.lineno}"
    seconds = time.perf_counter() - start
    return ("hang" if seconds > bound else outcome), seconds


# --- the actions ---------------------------------------------------------------------


def _read(path):
    import thruput
    return lambda: thruput.read(path)


def _read_many(path):
    import thruput
    return lambda: thruput.read_many([path])


def _inspect(path):
    """``thruput inspect --json PATH`` in-process, on a stdout that refuses what is not
    ASCII (as a strict terminal would): a failed file is a refusal naming it."""
    from thruput.cli import main
    from thruput.errors import ThruputError

    def run():
        out = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict")
        err = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["inspect", "--json", str(path)])
            out.flush()
        if code:
            raise ThruputError(err.getvalue().strip()[:500])
    return run


def _campaign(directory):
    def run():
        import thruput
        from thruput.campaign.check import check_campaign
        problems = [p for p in check_campaign(directory) if p.severity == "error"]
        thruput.open_campaign(directory, processed=directory / "no-products")
        if problems:
            from thruput.errors import ThruputError
            raise ThruputError(str(problems[0]))
    return run


def _manifest(directory):
    """runs.csv read and checked row by row (a huge one: its raw files are not read)."""
    def run():
        from thruput.campaign.dataset import parse_manifest
        from thruput.errors import ThruputError
        _, errors, _ = parse_manifest(directory)
        if errors:
            raise ThruputError(f"{directory / 'runs.csv'}:{errors[0][0]}: {errors[0][1]}")
    return run


def _import(source, root):
    def run():
        from thruput.monitor.importer import import_monitor
        import_monitor("imported", [source], root=root, time_pattern="%Y%m%d-%H%M%S")
    return run


def _extract(source, into):
    def run():
        from thruput.monitor.importer import _extract
        _extract(source, into)
    return run


def _yaml(path):
    from thruput import guard
    return lambda: guard.load_yaml_file(path)


# --- the strategies: each yields (label, action, names a refusal must mention) --------


def paths(tmp, r, count, heavy):
    """What a path can be: a FIFO, a device, a folder, missing, a link loop, a link out of
    its campaign, a name that is not UTF-8; given to read, read_many, inspect, a campaign."""
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("title: outside\n")
    (outside / "runs.csv").write_text(SWEEP.joinpath("runs.csv").read_text())
    shutil.copy(PING, outside / "ping.out")
    kinds = ("fifo", "dev-zero", "folder", "missing", "loop", "link-out", "bad-name")
    for k in range(count):
        kind = kinds[k % len(kinds)] if k < len(kinds) else r.choice(kinds)
        case = tmp / f"case{k}"
        case.mkdir()
        path = case / "log.out"
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dev-zero":
            path.symlink_to("/dev/zero")
        elif kind == "folder":
            path.mkdir()
        elif kind == "loop":
            path.symlink_to(path)
        elif kind == "link-out":
            path.symlink_to(outside / "ping.out")
        elif kind == "bad-name":
            path = case / os.fsdecode(b"log-\xff\xfe.out")
            shutil.copy(PING, path)
        acts = [("read", _read(path)), ("read_many", _read_many(path)), ("inspect", _inspect(path))]
        if kind == "bad-name":
            acts = [("inspect-folder", _inspect(case))]
        for what, act in acts:
            yield f"{kind} {what}", act, [path, case]
        # the same as a campaign's own files
        for name in ("campaign.yaml", "runs.csv"):
            camp = case / f"camp-{name}"
            shutil.copytree(SWEEP, camp)
            target = camp / name
            target.unlink()
            if kind == "fifo":
                os.mkfifo(target)
            elif kind == "dev-zero":
                target.symlink_to("/dev/zero")
            elif kind == "folder":
                target.mkdir()
            elif kind == "loop":
                target.symlink_to(target)
            elif kind == "link-out":
                target.symlink_to(outside / ("secret.yaml" if name == "campaign.yaml" else name))
            elif kind == "bad-name":
                shutil.copy(SWEEP / name, target)
                continue
            yield f"{kind} as {name}", _campaign(camp), [target, camp]


ALIAS_BOMB = "".join(f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def campaign(tmp, r, count, heavy):
    """campaign.yaml and runs.csv written to hurt: alias bombs, Latin-1, deep nesting,
    50,000 schema errors, plans and repeats of a billion, digits int() refuses or that
    are not ASCII, a 128 KiB header cell, a huge runs.csv, formula-like run ids."""
    yaml_text = SWEEP.joinpath("campaign.yaml").read_text()
    csv_text = SWEEP.joinpath("runs.csv").read_text()
    header, first, *rest = csv_text.splitlines(keepends=True)

    def yaml_cases():
        field = r.choice(("notes", "who", "title"))
        yield "alias bomb", f"a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n{ALIAS_BOMB}" + \
            yaml_text.replace(f"\n{field}:", f"\n{field}: *i\nx-{field}:", 1), None
        yield "latin-1", None, yaml_text.replace("notes:", "who_else: Jos\xe9\nnotes:", 1).encode("latin-1")
        depth = r.choice((300, 1200, 5000))
        yield f"nested {depth}", yaml_text + "deep: " + "[" * depth + "]" * depth + "\n", None
        n = 50000 if heavy else 5000
        yield f"{n} schema errors", yaml_text + "".join(f"junk{i}: {i}\n" for i in range(n)), None
        big = r.choice((10**9, 10**6 + 1))
        yield f"repeats {big}", yaml_text.replace("repeats: ", f"repeats: {big} #", 1), None
        yield "over its limit (sparse)", None, "sparse"

    def csv_cases():
        cells = first.rstrip("\n").split(",")
        for label, col, value in (("repeat ²", 6, "²"), ("repeat Arabic-Indic", 6, "\u0661\u0662"),
                                  ("repeat 999999999", 6, "999999999"), ("streams 10**30", 5, "1" + "0" * 30),
                                  ("window huge", 4, "9" * 400), ("run =HYPERLINK", 0, '"=HYPERLINK(""http://x"")"')):
            row = cells[:]
            row[col] = value
            yield label, header + ",".join(row) + "\n" + "".join(rest), None
        yield "128 KiB header cell", header.rstrip("\n") + "," + "h" * (128 * 2**10 + 1) + "\n" + first, None
        yield "NUL in a row", header + first.replace(",", ",\0", 1) + "".join(rest), None
        yield "latin-1 cell", None, (header + first.replace("loaded", "lo\xe9ded") + "".join(rest)).encode("latin-1")
        rows = 1_000_000 if heavy else 20_000
        yield f"{rows:,} rows", header + (first * rows), None
        yield "over its limit (sparse)", None, "sparse"

    made = 0
    while made < count:
        for name, cases in (("campaign.yaml", yaml_cases), ("runs.csv", csv_cases)):
            for label, text, raw in cases():
                if made >= count:
                    return
                camp = tmp / f"c{made}"
                shutil.copytree(SWEEP, camp)
                target = camp / name
                if raw == "sparse":
                    with open(target, "wb") as f:
                        f.truncate((10 * 2**30) if heavy else (2**30))
                elif raw is not None:
                    target.write_bytes(raw)
                else:
                    target.write_text(text)
                made += 1
                act = _manifest(camp) if label.endswith(" rows") else _campaign(camp)
                yield f"{name}: {label}", act, [target, name, camp]


def archives(tmp, r, count, heavy):
    """Monitor imports of .tgz archives and folders: thousands of members, links out of
    the folder, a member that names a path outside, a gzip bomb, a large JSON member."""
    outside = tmp / "outside"
    outside.mkdir()
    shutil.copy(PING, outside / "20260101-000000.out")
    log = PING.read_bytes()
    kinds = ("many members", "link member", "dotdot member", "gzip bomb", "folder link out", "big json")
    for k in range(count):
        kind = kinds[k % len(kinds)] if k < len(kinds) else r.choice(kinds)
        case = tmp / f"a{k}"
        case.mkdir()
        source = case / "pile.tgz"
        if kind == "folder link out":
            source = case / "pile"
            source.mkdir()
            shutil.copy(PING, source / "20260101-000100.out")
            (source / "20260101-000000.out").symlink_to(outside / "20260101-000000.out")
        else:
            with tarfile.open(source, "w:gz") as tar:
                def add(name, data, **kw):
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    for key, value in kw.items():
                        setattr(info, key, value)
                    tar.addfile(info, io.BytesIO(data))
                if kind == "many members":
                    n = 20_000 if heavy else r.choice((2_000, 5_000))
                    for i in range(n):
                        add(f"d/2026{(i // 1440) % 12 + 1:02d}01-{(i // 60) % 24:02d}{i % 60:02d}00-{i}.out", log)
                elif kind == "link member":
                    info = tarfile.TarInfo("20260101-000000.out")
                    info.type, info.linkname = tarfile.SYMTYPE, str(outside / "20260101-000000.out")
                    tar.addfile(info)
                elif kind == "dotdot member":
                    add("../../20260101-000000.out", log)
                elif kind == "gzip bomb":
                    add("20260101-000000.out", log + b"\n" * ((300 if heavy else 3) * 2**20))
                else:
                    size = (250 if heavy else 2) * 2**20
                    body = b'{"start": {"connecting_to": {"host": "x"}}, "pad": "' + b"x" * size + b'"}'
                    add("20260101-000000.json", body)
        act = _extract(source, case / "x") if kind == "many members" else _import(source, case / "campaigns")
        yield kind, act, [source, "20260101-000000", "pile"]


#: The readers of JSON documents.
JSON_FORMATS = ("iperf3_json", "iperf3_stream", "flent", "irtt", "ndt7", "pscheduler_throughput",
                "pscheduler_latency", "esmond_throughput", "esmond_latency")


def json_shapes(tmp, r, count, heavy):
    """Every JSON reader given nesting 5,000 deep at a random place, iperf3 --json-stream
    events whose name is not a string or whose server intervals are not a list."""
    json_formats = JSON_FORMATS
    stream = next(p for p in sorted((DATA / "iperf3_stream").glob("*.jsonl")) if "server-output-json" in p.name)
    lines = stream.read_text().splitlines()
    for k in range(count):
        case = tmp / f"j{k}"
        case.mkdir()
        shape = r.choice(("deep", "deep", "event name", "server intervals"))
        if shape == "deep":
            name = r.choice(json_formats)
            depth = r.choice((1100, 5000, 50000))
            opener = r.choice("[{")
            nest = (('{"a": ' * depth + "1" + "}" * depth) if opener == "{" else "[" * depth + "]" * depth)
            where = r.choice(("alone", "in a member", "cut"))
            text = (nest if where == "alone" else '{"start": ' + nest + "}" if where == "in a member"
                    else '{"intervals": [' + nest[:len(nest) // 2])
            path = case / f"deep.{name}.json"
            path.write_text(text)
            yield f"{name} nested {depth} {opener} {where}", _read_as(path, name), [path]
        else:
            out = []
            for line in lines:
                event = json.loads(line)
                if shape == "event name" and r.random() < 0.5:
                    event["event"] = r.choice(([event["event"]], {"e": 1}, 5, None))
                if shape == "server intervals":
                    _replace_key(event, "intervals", r.choice((5, "x", [5], [{"streams": 5}], {"a": []})))
                out.append(json.dumps(event))
            path = case / "stream.jsonl"
            path.write_text("\n".join(out) + "\n")
            yield f"iperf3_stream {shape}", _read_as(path, "iperf3_stream"), [path]


def _replace_key(doc, key, value):
    """Every ``key`` member of the JSON ``doc`` (at any depth) set to ``value``."""
    if isinstance(doc, dict):
        for k in doc:
            if k == key:
                doc[k] = value
            else:
                _replace_key(doc[k], key, value)
    elif isinstance(doc, list):
        for item in doc:
            _replace_key(item, key, value)


def _read_as(path, name):
    import thruput
    return lambda: thruput.read(path, format=name)


def huge(tmp, r, count, heavy):
    """Huge and sparse logs: a sparse file past the log limit that starts with a ping
    header, blank lines after a header, one long line read whole, one long line streamed."""
    header = PING.read_text().splitlines(keepends=True)
    head = header[0] + "".join(header[1:3])
    kinds = ("sparse", "blank lines", "long line", "streamed line")
    for k in range(count):
        kind = kinds[k % len(kinds)] if k < len(kinds) else r.choice(kinds)
        path = tmp / f"h{k}.out"
        with open(path, "w") as f:
            f.write(head)
            if kind == "sparse":
                f.truncate((10 if heavy else 5) * 2**30)
            elif kind == "blank lines":
                f.write("\n" * ((30 if heavy else 3) * 2**20))
            elif kind == "long line":
                f.write("x" * ((60 if heavy else 3) * 2**20) + "\n")
            else:
                f.writelines("y" * 2**20 for _ in range(400 if heavy else 80))
                f.write("\n")
        yield f"{kind}", _read(path), [path]
        yield f"{kind} lenient", _lenient_read(path), [path]
        path.unlink() if kind != "sparse" else None


def _lenient_read(path):
    import thruput
    from thruput.contract import lenient

    def run():
        with lenient(True):
            thruput.read(path)
    return run


GENERATORS = {"paths": paths, "campaign": campaign, "archives": archives, "json": json_shapes, "huge": huge}
#: Cases per strategy in the quick (CI) run.
QUICK = {"paths": 7, "campaign": 17, "archives": 6, "json": 20, "huge": 4}


def run_strategy(name, count, seed, heavy, emit=print):
    """Run ``count`` cases of strategy ``name``; their outcome counts (one dict)."""
    r = random.Random(f"{name}:{seed}")
    counts = {"strategy": name, "seed": seed, "inputs": 0, "read": 0, "refused": 0, "crashes": 0,
              "hangs": 0, "outside": 0, "slowest_s": 0.0}
    with tempfile.TemporaryDirectory(prefix="tph6-files-") as scratch:
        tmp = Path(os.path.realpath(scratch))
        for label, action, names in GENERATORS[name](tmp, r, count, heavy):
            _opened.clear()
            outcome, seconds = _outcome(action, names, BOUND_S * (2 if heavy else 1))
            outside = sorted({p for p in map(os.path.realpath, _opened) if p.startswith(str(tmp / "outside"))})
            if label.startswith("link-out ") and " as " not in label:
                outside = []        # a link the user named is read where it leads: no folder to stay in
            if outside and outcome != "hang":
                outcome = f"outside: opened {outside[0]}"
            key = {"read": "read", "refused": "refused", "hang": "hangs"}.get(
                outcome, "outside" if outcome.startswith("outside") else "crashes")
            counts["inputs"] += 1
            counts[key] += 1
            counts["slowest_s"] = round(max(counts["slowest_s"], seconds), 2)
            emit(json.dumps({"strategy": name, "label": label, "outcome": outcome, "seconds": round(seconds, 3)}))
    counts["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return counts


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    count = int(argv[argv.index("--count") + 1]) if "--count" in argv else None
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 0
    heavy = "--heavy" in argv
    names = [a for a in argv if a in STRATEGIES] or list(STRATEGIES)
    sys.addaudithook(_audit)
    for name in names:
        counts = run_strategy(name, count or QUICK[name], seed, heavy, emit=lambda line: print(line, flush=True))
        print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
