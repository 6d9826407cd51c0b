"""Errors raised by thruput.

Every error a user can meet while reading logs is a :class:`ThruputError`, so one
``except ThruputError`` catches them all; each names the file and, where it can, the line.
"""

from __future__ import annotations

__all__ = [
    "ThruputError",
    "ParseError",
    "ReaderBug",
    "UnknownFormatError",
    "AmbiguousFormatError",
    "ContractError",
    "FileRefused",
]


class ThruputError(ValueError):
    """Base class of every error thruput raises on bad input."""


class ParseError(ThruputError):
    """A log could not be parsed.

    Parameters
    ----------
    message : str
        What is wrong, in the reader's words.
    line : int, optional
        1-based line number in the source (byte offset for binary formats, see ``unit``).
    path : str, optional
        Source file; filled in by :func:`thruput.read` when a parser raises.
    errors : list of (line, message), optional
        Every error found, when the parser collected more than one.
    """

    def __init__(self, message, line=None, path=None, errors=None):
        self.message = message
        self.line = line
        self.path = path
        self.errors = list(errors) if errors else [(line, message)]
        super().__init__(str(self))

    def __str__(self):
        where = self.path or "<text>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        more = len(self.errors) - 1
        tail = f" (and {more} more error{'s' if more > 1 else ''})" if more > 0 else ""
        return f"{where}: {self.message}{tail}"

    def with_path(self, path):
        """Return a copy of this error that names ``path``."""
        return type(self)(self.message, self.line, str(path), self.errors)


class ReaderBug(ParseError):
    """A reader failed on a file with an exception it should never raise (a bug in
    thruput, not in the file): still a ThruputError naming the file, with what failed
    where, so that one bad file in a pile is reported like any other. The tests' fuzzer
    counts these as crashes."""


class FileRefused(ParseError):
    """A file thruput will not read (:mod:`thruput.guard`): missing, not a regular file, outside
    the folder it belongs to, past its size limit, not UTF-8, or a YAML or JSON document past
    its bounds. The message says which."""


class UnknownFormatError(ThruputError):
    """No registered format recognised the file; the message lists the known ones."""


class AmbiguousFormatError(ThruputError):
    """More than one format recognised the file; the message lists the candidates."""


class ContractError(ThruputError):
    """A Dataset does not follow the contract of its kind (see :mod:`thruput.contract`)."""
