"""``thruput site serve`` serves the files of the site and nothing else (issue 40)."""

import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from thruput.site.serve import make_server


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "_site"
    (root / "sub").mkdir(parents=True)
    (root / "index.html").write_text("<p>home</p>")
    (root / "sub" / "page.html").write_text("<p>page</p>")
    (root / "nested").mkdir()                       # a folder without index.html
    (root / "nested" / "a.csv").write_text("x\n1\n")
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0\n")
    (root / "etc").symlink_to(outside)              # a link to a folder outside
    (root / "pw.txt").symlink_to(outside / "passwd")  # a link to a file outside
    (root / "alias.html").symlink_to(root / "index.html")  # a link that stays inside
    return root


def _get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def test_serves_site_files_only(site):
    server = make_server(site, port=0)
    os.environ["THRUPUT_SERVE_QUIET"] = "1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        assert _get(port, "/") == (200, "<p>home</p>")
        assert _get(port, "/sub/page.html") == (200, "<p>page</p>")
        assert _get(port, "/alias.html") == (200, "<p>home</p>")
        assert _get(port, "/nested/a.csv") == (200, "x\n1\n")
        for path in ("/nested/", "/sub/", "/etc/passwd", "/etc/", "/pw.txt",
                     "/../secret/passwd", "/%2e%2e/secret/passwd", "/nothing.html"):
            status, body = _get(port, path)
            assert status == 404, path
            assert "root:x" not in body and "a.csv" not in body and "page.html" not in body, path
    finally:
        os.environ.pop("THRUPUT_SERVE_QUIET", None)
        server.shutdown()
        server.server_close()


def test_cli_serve_missing_folder(tmp_path):
    proc = subprocess.run(["thruput", "site", "serve", "--dir",
                           str(tmp_path / "none"), "--port", "0"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "no such folder" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_serve_runs(site):
    proc = subprocess.Popen(["thruput", "site", "serve", "--dir", str(site),
                             "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        deadline = time.monotonic() + 60
        while True:
            try:
                assert _get(port, "/")[0] == 200
                break
            except urllib.error.URLError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert _get(port, "/etc/passwd")[0] == 404
    finally:
        proc.terminate()
        proc.wait(timeout=30)
