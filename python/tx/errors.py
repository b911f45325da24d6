"""TxError: a failed tx call, with the diagnostics that explain it."""

import collections
import re

Diagnostic = collections.namedtuple(
    "Diagnostic", ["file", "line", "column", "severity", "message"])
Diagnostic.__doc__ = "One diagnostic; file/line/column are None when unknown."

_LOCATED = re.compile(
    r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): "
    r"(?P<sev>error|warning|remark|note): (?P<msg>.*)$")
_UNLOCATED = re.compile(r"^(?P<loc>.*?): (?P<sev>error|warning|remark|note): "
                        r"(?P<msg>.*)$")


def parse_diagnostics(text):
    """Splits the C API's `file:line:col: severity: message` lines."""
    diagnostics = []
    for line in text.splitlines():
        m = _LOCATED.match(line)
        if m:
            diagnostics.append(
                Diagnostic(m["file"], int(m["line"]), int(m["col"]), m["sev"],
                           m["msg"]))
            continue
        m = _UNLOCATED.match(line)
        if m:
            diagnostics.append(
                Diagnostic(m["loc"], None, None, m["sev"], m["msg"]))
        elif diagnostics:
            # A message that spans lines continues the previous diagnostic.
            last = diagnostics[-1]
            diagnostics[-1] = last._replace(message=last.message + "\n" + line)
    return diagnostics


class TxError(Exception):
    """A tx call failed.

    status: the C status name ("TX_ERROR_PARSE", ...); message: the full
    text; diagnostics: the located diagnostics in it (may be empty).
    """

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message
        self.diagnostics = [
            d for d in parse_diagnostics(message) if d.line is not None
        ]
