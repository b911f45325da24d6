"""Errors of the Python-source frontend, located in the modeling file."""


class FrontendError(Exception):
    """`file:line:col: error: message`, the way compilers print it.

    `node` is the ast node the error is about (its line and column are used);
    `path` is filled in by the importer when it is not known where raised."""

    def __init__(self, message, node=None, path=None, line=None, col=None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line if line is not None else getattr(node, "lineno", None)
        # ast columns count from 0; diagnostics count from 1.
        if col is None and node is not None and hasattr(node, "col_offset"):
            col = node.col_offset + 1
        self.col = col

    def located(self, path):
        if self.path is None:
            self.path = path
        return self

    def __str__(self):
        where = self.path or "<input>"
        if self.line is not None:
            where += ":%d" % self.line
            if self.col is not None:
                where += ":%d" % self.col
        return "%s: error: %s" % (where, self.message)
