"""Run ``rocrate-validator`` offline: its HTTP cache filled with the RO-Crate JSON-LD context
that ro-crate-py ships (``rocrate/data/ro-crate.jsonld``).

The validator fetches the crate's ``@context`` (``https://w3id.org/ro/crate/1.1/context``)
through a ``requests_cache`` session; with ``--offline --cache-path DIR`` it reads only that
cache. :func:`warm` stores the shipped context in such a cache under every URL given, by
asking the validator's own requester with a transport adapter that answers from the file,
so no request leaves the machine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: The URLs a thruput release's crate makes the validator resolve.
CONTEXTS = ("https://w3id.org/ro/crate/1.1/context",)

_WARM = """
import io, sys
from pathlib import Path
import requests, rocrate, urllib3
from requests.adapters import BaseAdapter
from rocrate_validator.utils.http import HttpRequester
from rocrate_validator.utils.document_loader import _fetch_json_ld

BODY = (Path(rocrate.__file__).parent / "data" / "ro-crate.jsonld").read_bytes()

class Shipped(BaseAdapter):
    def send(self, request, **kwargs):
        r = requests.Response()
        r.status_code, r._content, r.url, r.request, r.encoding = 200, BODY, request.url, request, "utf-8"
        r.headers["Content-Type"] = "application/ld+json"
        r.raw = urllib3.HTTPResponse(body=io.BytesIO(BODY), headers=dict(r.headers), status=200,
                                     preload_content=False, request_url=request.url)
        return r

    def close(self):
        pass

requester = HttpRequester.initialize_cache(cache_max_age=-1, cache_path=sys.argv[1])
for scheme in ("https://", "http://"):
    requester.session.mount(scheme, Shipped())
for url in sys.argv[2:]:
    assert _fetch_json_ld(url)["@context"]
requester.session.close()
"""


def warm(cache, urls=CONTEXTS):
    """Fill the validator's cache at ``cache`` (a path prefix) with the shipped context."""
    subprocess.run([sys.executable, "-c", _WARM, str(cache), *urls], check=True, capture_output=True, text=True)
    return Path(cache)


def validate(crate, cache):
    """``rocrate-validator validate --offline`` on the folder ``crate``; the CompletedProcess."""
    exe = Path(sys.executable).parent / "rocrate-validator"
    return subprocess.run([str(exe), "validate", "--offline", "--cache-path", str(cache), "--no-paging",
                           "-f", "json", str(crate)], capture_output=True, text=True)


__all__ = ["warm", "validate", "CONTEXTS"]
