"""``thruput site serve``: the built site on localhost, and nothing else.

Python's ``SimpleHTTPRequestHandler`` lists folders and follows symbolic links wherever
they point (a link to ``/etc`` in the site served ``/etc/passwd``). This handler serves
regular files whose real path lies inside the site's real path: a folder gets its
``index.html`` or 404, a link that leaves the site 404, and no folder is ever listed.
"""

from __future__ import annotations

import functools
import http.server
import os
from pathlib import Path

__all__ = ["SiteRequestHandler", "make_server", "serve"]


class SiteRequestHandler(http.server.SimpleHTTPRequestHandler):
    """Serve the files of one folder only: no listing, no symbolic link out of it."""

    def __init__(self, *args, directory, **kwargs):
        self._root = os.path.realpath(directory)
        super().__init__(*args, directory=directory, **kwargs)

    def _inside(self, path):
        real = os.path.realpath(path)
        return real == self._root or real.startswith(self._root + os.sep)

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not self.path.split("?", 1)[0].split("#", 1)[0].endswith("/"):
                return super().send_head()          # the redirect to "dir/"
            path = os.path.join(path, "index.html")
        if not (self._inside(path) and os.path.isfile(path)):
            self.send_error(404, "File not found")
            return None
        return super().send_head()

    def list_directory(self, path):                 # never reached through send_head
        self.send_error(404, "File not found")
        return None

    def log_message(self, format, *args):           # noqa: A002 (http.server's name)
        if os.environ.get("THRUPUT_SERVE_QUIET") != "1":
            super().log_message(format, *args)


def make_server(site="_site", host="127.0.0.1", port=8000):
    """A ``ThreadingHTTPServer`` serving the files of ``site`` (not started)."""
    site = Path(site)
    if not site.is_dir():
        raise FileNotFoundError(f"{site}: no such folder (build the site first: make site)")
    handler = functools.partial(SiteRequestHandler, directory=str(site))
    return http.server.ThreadingHTTPServer((host, port), handler)


def serve(site="_site", host="127.0.0.1", port=8000):
    """Serve ``site`` on ``host:port`` until interrupted (a quick look, not production)."""
    with make_server(site, host, port) as httpd:
        print(f"serving {site} at http://{host}:{httpd.server_address[1]}/ (Ctrl-C to stop)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
