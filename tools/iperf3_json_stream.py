"""Convert iperf3 ``-J`` documents into ``--json-stream`` output (iperf3 3.17+), so that
the --json-stream reader can be tested on real runs with the iperf3 this machine has (3.12,
which has no --json-stream).

Usage: python tools/iperf3_json_stream.py IN.json OUT.jsonl

One line per event, ``{"event": NAME, "data": VALUE}`` unformatted, in the order iperf3's
``JSONStream_Output`` calls write them (src/iperf_api.c of iperf3 3.17): ``start`` when
the test starts, one ``interval`` per element of ``intervals``, and at the end ``error``
(if any), ``server_output_json`` / ``server_output_text`` (--get-server-output), ``end``.
The values are the -J document's, unchanged; numbers are written by Python's json (the
shortest text that reads back to the same float) where iperf3's cJSON writes up to 17
significant digits: the same numbers, possibly spelled differently.
"""

from __future__ import annotations

import json
import sys

#: the events written at the end of a test, in iperf3's order (iperf_json_finish)
END_EVENTS = ("error", "server_output_json", "server_output_text", "end")


def events(doc):
    """The --json-stream events of one -J document, in order."""
    out = [("start", doc["start"])]
    out += [("interval", interval) for interval in doc.get("intervals") or ()]
    out += [(name, doc[name]) for name in END_EVENTS if name in doc]
    return out


def convert(text):
    """The --json-stream text of every -J document in ``text`` (one after another)."""
    decoder = json.JSONDecoder()
    pos, lines = 0, []
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        doc, pos = decoder.raw_decode(text, pos)
        lines += [json.dumps({"event": name, "data": data}, separators=(",", ":")) for name, data in events(doc)]
    return "".join(line + "\n" for line in lines)


if __name__ == "__main__":
    source, target = sys.argv[1:3]
    with open(source) as f:
        text = f.read()
    with open(target, "w") as f:
        f.write(convert(text))
