"""The published numbers of the source studies (``data/published/seed_*.csv``).

One row per printed value; the columns are documented in ``data/published/README.md``.
:func:`load` reads and validates them and adds exact SI values.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

from . import units
from .errors import ThruputError

__all__ = ["COLUMNS", "DEFAULT_DIR", "load", "read_csv", "config_frame", "PublishedError"]

#: columns of every ``seed_*.csv``, in order
COLUMNS = ("id", "seed", "section", "quote", "value", "unit", "measures", "statistic", "src",
           "dst", "window", "streams", "tool", "date", "group", "config", "note")
#: where the package keeps the published numbers: in a checkout a symlink to ``data/published``,
#: in an installed wheel a copy of it (package data)
PACKAGE_DIR = Path(__file__).resolve().parent / "studies" / "published"


def _default_dir():
    """The package's published numbers; without them (a checkout on a system that dropped the
    symlink), the ``data/published`` of the project found by walking up to its ``dvc.yaml``."""
    if any(PACKAGE_DIR.glob("seed_*.csv")):
        return PACKAGE_DIR
    for parent in Path(__file__).resolve().parents:
        if (parent / "dvc.yaml").is_file() and (parent / "data" / "published").is_dir():
            return parent / "data" / "published"
    return PACKAGE_DIR


#: ``seed_*.csv`` that :func:`load` reads when given no path: works from a checkout and
#: when the package is installed (see :func:`_default_dir`)
DEFAULT_DIR = _default_dir()
#: unit of rows that carry a date/time in ``date`` instead of a number in ``value``
DATETIME_UNIT = "datetime"
#: string columns; empty cells become "" rather than NaN so filters stay simple
_TEXT = [c for c in COLUMNS if c not in ("value", "streams")]


class PublishedError(ThruputError):
    """A published-numbers CSV breaks its schema; the message names file and line."""


def read_csv(path):
    """Read and validate one ``seed_*.csv``.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    pandas.DataFrame
        The CSV's columns, ``value`` float, ``streams`` nullable Int64.

    Raises
    ------
    PublishedError
        Wrong header, a duplicate id, an unknown unit, a value that is not a number, a
        number on a datetime row or a datetime row without a ``date``; the message names
        the file and the 1-based line.
    """
    path = Path(path)
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise PublishedError(f"{path}:1: header {reader.fieldnames} is not {list(COLUMNS)}")
        rows, seen = [], set()
        for row in reader:
            _check_row(row, path, reader.line_num, seen)
            rows.append(row)
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    df["value"] = pd.to_numeric(df["value"].replace("", np.nan))
    df["streams"] = pd.to_numeric(df["streams"].replace("", np.nan)).astype("Int64")
    return df


def _check_row(row, path, line, seen):
    def fail(msg):
        raise PublishedError(f"{path}:{line}: {row.get('id')!r}: {msg}")

    if not row["id"] or row["id"] in seen:
        fail("missing or duplicate id")
    seen.add(row["id"])
    if not row["id"].startswith(row["seed"] + "-"):
        fail(f"id does not start with its seed {row['seed']!r}")
    unit = row["unit"]
    if unit == DATETIME_UNIT:
        if row["value"] or not row["date"]:
            fail("a datetime row has its time in 'date' and no 'value'")
    elif unit:
        try:
            units.canonical(unit)
        except units.UnitError as exc:
            fail(str(exc))
    if row["value"]:
        try:
            float(row["value"])
        except ValueError:
            fail(f"value {row['value']!r} is not a number")
    if row["streams"] and not row["streams"].isdigit():
        fail(f"streams {row['streams']!r} is not a count")
    if row["config"] and not all("=" in p for p in row["config"].split(";")):
        fail(f"config {row['config']!r} is not 'key=value;key=value'")
    if row["window"]:
        try:
            number, wunit = row["window"].split()
            units.convert(float(number), wunit, "byte")
        except (ValueError, units.UnitError):
            fail(f"window {row['window']!r} is not '<number> <size unit>'")


def load(seed=None, path=None):
    """The published numbers as one tidy DataFrame.

    Parameters
    ----------
    seed : str or int or iterable, optional
        Only these seeds (``"000"``, ``1``, ``["001", "004"]``); all if None.
    path : str or Path, optional
        Directory of ``seed_*.csv``; :data:`DEFAULT_DIR` if None.

    Returns
    -------
    pandas.DataFrame
        The columns of ``data/published/README.md`` plus ``host_pair`` (``src->dst``),
        ``value_si`` / ``unit_si`` (the value in the base unit of its dimension: bit/s,
        byte, s, s/byte, Hz, 1, ...) and ``window_bytes``.

    Raises
    ------
    PublishedError
        No CSV found, or one breaks the schema (file and line named).
    """
    directory = Path(path) if path is not None else DEFAULT_DIR
    files = sorted(directory.glob("seed_*.csv"))
    if not files:
        raise PublishedError(f"{directory}: no seed_*.csv files")
    df = pd.concat([read_csv(f) for f in files], ignore_index=True)
    if df["id"].duplicated().any():
        raise PublishedError(f"{directory}: duplicate ids {sorted(df.loc[df['id'].duplicated(), 'id'])}")
    if seed is not None:
        wanted = [seed] if isinstance(seed, (str, int)) else list(seed)
        wanted = {f"{int(s):03d}" for s in wanted}
        df = df[df["seed"].isin(wanted)].reset_index(drop=True)
    return _derive(df)


def _derive(df):
    df = df.copy()
    df["host_pair"] = np.where((df["src"] != "") & (df["dst"] != ""), df["src"] + "->" + df["dst"], "")
    si, si_unit = [], []
    for value, unit in zip(df["value"], df["unit"]):
        if unit in ("", DATETIME_UNIT) or np.isnan(value):
            si.append(np.nan)
            si_unit.append("")
            continue
        dim = units.dimension(unit)
        si.append(units.to_base(value, unit))
        si_unit.append(units.BASE[dim])
    df["value_si"] = si
    df["unit_si"] = si_unit
    df["window_bytes"] = [window_bytes(w) for w in df["window"]]
    return df


def window_bytes(text):
    """``"128 KiB"`` -> 131072.0; ``""`` -> NaN."""
    if not text:
        return np.nan
    number, unit = text.split()
    return float(units.convert(float(number), unit, "byte"))


def config_frame(df):
    """The ``config`` column split into one column per key (missing keys are "").

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of :func:`load`.

    Returns
    -------
    pandas.DataFrame
        Same index as ``df``; one column per key found in ``config``.
    """
    records = []
    for text in df["config"]:
        pairs = [p.split("=", 1) for p in text.split(";") if p]
        records.append({k: v for k, v in pairs})
    return pd.DataFrame.from_records(records, index=df.index).fillna("")
