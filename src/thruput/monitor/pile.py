"""What a file of a real pile is, when no test reader takes it.

Measurement scripts leave more than test logs beside them: per-run CSV exports of what
they parsed, DNS lookups, READMEs, plots, empty files of a test that never started. The
monitor importer reads every file first (:func:`thruput.read`); a file no reader takes
is then sniffed here, by its content, to tell a *failed test* (a tool's error message, a
log cut off: kept, as a failed test) from a file that is *not a test log* (skipped, with
a reason counted in the import's summary) or a known *ancillary* format (kept beside
the tests and listed under ``ancillary`` in campaign.yaml).

:func:`not_a_log` answers before any reader runs, for what is certainly no log (an empty
file, an image); :func:`what_is` after the readers refused a file.
"""

from __future__ import annotations

import re

__all__ = ["not_a_log", "what_is", "EMPTY", "IMAGE", "CSV_EXPORT", "README", "WRAPPER_ONLY_NO_TEST",
           "BINARY", "UNKNOWN_TEXT", "ANCILLARY_TEXT", "FAILED_TEST_EVIDENCE"]

#: Skip reasons (the keys of the import summary's counts).
EMPTY = "empty file"
IMAGE = "image"
CSV_EXPORT = "csv export"
README = "README or notes"
WRAPPER_ONLY_NO_TEST = "wrapper lines only, no test named"
BINARY = "binary file"
UNKNOWN_TEXT = "text no reader knows"
#: Magic numbers of images and documents (the first bytes).
IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"%PDF-", b"BM",
               b"II*\x00", b"MM\x00*", b"<svg", b"<?xml version")
#: How much of a file the sniffing here reads.
HEAD_BYTES = 8192
#: Known non-test text formats kept as ancillary data: what each is -> its pattern
#: (searched in the head, a wrapper's line prefixes allowed before each line).
_P = r"(?:\[[^\]\n]*\] ?)?"
ANCILLARY_TEXT = {
    "DNS lookups (nslookup output)": re.compile(rf"(?m)^{_P}Server:\s+\S+\n{_P}Address:\s+\S+"),
    "DNS lookups (dig output)": re.compile(rf"(?m)^{_P}; <<>> DiG \S+"),
}
#: A tool's own words in a log the readers refused: a test that ran and failed (an iperf3
#: error document or message, nuttcp's error from its server, ping's network errors).
FAILED_TEST_EVIDENCE = re.compile(
    r"(?im)iperf3?[:\s]|nuttcp|^\s*\{\s*\"(?:start|error|intervals|end)\"|\"error\"\s*:|"
    r"^(?:\S+ )?PING \S|icmp_seq|packets transmitted|[Cc]onnecting to host|connect to \S+ with|"
    r"^connect: |unable to connect|Connection refused|Network is unreachable|No route to host|"
    r"Name or service not known|Temporary failure in name resolution|server is busy")
#: A CSV export's header: two or more names, comma separated (no numbers: data rows of a
#: header-less CSV are iperf 2 -y C, which its reader takes).
CSV_HEADER = re.compile(r"^\ufeff?\"?[A-Za-z_][\w .()/%-]*\"?(?:,\"?[A-Za-z_][\w .()/%-]*\"?)+\s*$")
#: A README's or note's first line: a Markdown heading or a file named so.
README_NAME = re.compile(r"^(?:readme|notes?|license|changelog)(?:\.\w+)?$", re.I)
MARKDOWN = re.compile(r"(?m)^#{1,6} \S|^={3,}$|^-{3,}$")


def not_a_log(raw):
    """The skip reason of a file that is certainly no log (empty, an image), else None."""
    if not raw.strip():
        return EMPTY
    if raw.startswith(IMAGE_MAGIC):
        return IMAGE
    return None


def what_is(raw, name, wrapper_only, test_named):
    """A file the readers refused: ``("failed", "")`` for a test that ran and failed,
    ``("ancillary", what)`` for a known non-test format, ``("skip", reason)`` otherwise.

    Parameters
    ----------
    raw : bytes
        The file's bytes.
    name : str
        Its file name (for READMEs only: the content decides everything else).
    wrapper_only : bool
        It holds nothing but a timestamping wrapper's ``Start time``/``End time`` lines.
    test_named : bool
        Its path names a test (``tcp``, ``udp``, ``ping`` ..., or --path-pattern's group).
    """
    head_bytes = raw[:HEAD_BYTES]
    if wrapper_only:          # the tool printed nothing: a failed test where one was meant
        return ("failed", "") if test_named else ("skip", WRAPPER_ONLY_NO_TEST)
    if b"\x00" in head_bytes:
        return "skip", BINARY
    head = head_bytes.decode("utf-8", errors="replace")
    for what, pattern in ANCILLARY_TEXT.items():
        if pattern.search(head):
            return "ancillary", what
    if _is_csv(head):
        return "skip", CSV_EXPORT
    if README_NAME.match(name) or MARKDOWN.search(head[:2048]):
        return "skip", README
    if FAILED_TEST_EVIDENCE.search(head):
        return "failed", ""
    return "skip", UNKNOWN_TEXT


def _is_csv(head):
    """A header of names and rows with as many commas (all rows of the head, the last one
    perhaps cut)."""
    lines = [line for line in head.splitlines() if line.strip()]
    if len(lines) > 1 and not head.endswith("\n"):
        lines.pop()
    if not lines or not CSV_HEADER.match(lines[0]):
        return False
    commas = lines[0].count(",")
    return all(line.count(",") == commas for line in lines[1:])
