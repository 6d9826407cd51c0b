#!/usr/bin/env bash
# Install everything thruput needs on this machine: the measurement tools (Debian packages,
# when run as root with apt-get) and the Python package with its pipeline, notebook and test
# dependencies (into the active conda env or virtualenv, else into ./.venv).
set -euo pipefail
cd "$(dirname "$0")/.."

# measurement tools the tests run for real (iperf3, iperf 2, nuttcp, irtt, ping); chromium for the site's browser test;
# moreutils for ts (the timestamping wrapper of tests/data/wrapped/record.sh);
# a C compiler and Python headers for Python packages that pip builds from source;
# curl, fio, tcpdump and sshd for thruput record's applications, captures and far ends;
# prometheus (with promtool) for tests/test_monitor_metrics.py, which scrapes a real one
APT_PACKAGES=(iperf3 iperf nuttcp irtt iputils-ping iproute2 chromium busybox moreutils gcc python3-dev python3-venv prometheus
              traceroute mtr-tiny scamper curl fio tcpdump openssh-server openssh-client)

missing=()
command -v iperf3 >/dev/null || missing+=(iperf3)
command -v iperf >/dev/null || missing+=(iperf)
command -v nuttcp >/dev/null || missing+=(nuttcp)
command -v irtt >/dev/null || missing+=(irtt)
command -v curl >/dev/null || missing+=(curl)
command -v fio >/dev/null || missing+=(fio)
command -v tcpdump >/dev/null || missing+=(tcpdump)
command -v /usr/sbin/sshd >/dev/null || missing+=(openssh-server)
command -v ssh >/dev/null || missing+=(openssh-client)
command -v ping >/dev/null || missing+=(iputils-ping)
command -v ip >/dev/null || missing+=(iproute2)
command -v chromium >/dev/null || missing+=(chromium)
command -v busybox >/dev/null || missing+=(busybox)
command -v promtool >/dev/null || missing+=(prometheus)   # the metrics test runs a real Prometheus
command -v ts >/dev/null || missing+=(moreutils)
command -v traceroute >/dev/null || missing+=(traceroute)
command -v mtr >/dev/null || missing+=(mtr-tiny)
command -v scamper >/dev/null || missing+=(scamper)
command -v gcc >/dev/null || missing+=(gcc)
python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    || missing+=(python3-dev)
if ((${#missing[@]})); then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "bootstrap: installing ${missing[*]} with apt-get"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${APT_PACKAGES[@]}" >/dev/null
    else
        echo "bootstrap: not installed: ${missing[*]} (tests that need them will be skipped)" >&2
    fi
fi

if [ -n "${CONDA_PREFIX:-}" ] || [ -n "${VIRTUAL_ENV:-}" ]; then
    PY=python
else
    [ -x .venv/bin/python ] || python3 -m venv .venv
    PY=.venv/bin/python
fi
"$PY" -m pip install -q --upgrade pip
"$PY" -m pip install -q -e ".[dev]"
# JupyterLab asks on its first start whether to fetch Jupyter's news from the web: thruput is
# used offline, so this env's JupyterLab is told not to (fetchNews "false": neither fetch nor
# ask); a setting the user already made there is kept
"$PY" - <<'PY'
import json, pathlib, sys
path = pathlib.Path(sys.prefix, "share", "jupyter", "lab", "settings", "overrides.json")
settings = json.loads(path.read_text()) if path.is_file() else {}
settings.setdefault("@jupyterlab/apputils-extension:notification", {}).setdefault("fetchNews", "false")
path.parent.mkdir(parents=True, exist_ok=True)
path.write_text(json.dumps(settings, indent=2) + "\n")
PY
# `jupyter nbconvert --to html` of a notebook: no script from a CDN (its charts are static
# SVG in the saved outputs; thruput.site.html.OFFLINE_NBCONVERT), in <env>/etc/jupyter
"$PY" -c 'from thruput.site.html import write_nbconvert_config; print("bootstrap: nbconvert offline:", write_nbconvert_config())'
echo "bootstrap: thruput installed for $("$PY" -c 'import sys; print(sys.executable)')"
