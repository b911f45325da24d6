"""A parsed modeling file: its imports, classes, functions and constants."""

import ast

from .errors import FrontendError
from . import values as V


def _builtin(fn):
    fn._tx_builtin = True
    return fn


def _plain(fn):
    """A Python builtin applied to import-time values."""
    @_builtin
    def call(tr, node, args, kwargs):
        for v in list(args) + list(kwargs.values()):
            if not tr._python(v, node):
                raise FrontendError("%s() of %s is not supported"
                                    % (fn.__name__, tr.describe(v)), node)
        try:
            return fn(*args, **kwargs)
        except Exception as err:
            raise FrontendError("%s(): %s" % (fn.__name__, err), node) from None
    return call


@_builtin
def _getattr(tr, node, args, kwargs):
    if len(args) not in (2, 3) or not isinstance(args[1], str):
        raise FrontendError("getattr(obj, 'name'[, default]) expected", node)
    obj, name = args[0], args[1]
    default = args[2] if len(args) == 3 else V.Unavailable
    if isinstance(obj, V.Config):
        return tr.config_get(obj, name, node, default)
    if isinstance(obj, V.Instance):
        if name in obj.attrs:
            return obj.attrs[name]
        if default is not V.Unavailable:
            return default
        raise FrontendError("module '%s' has no attribute '%s'" % (obj.cls.name, name), node)
    raise FrontendError("getattr of %s is not supported" % tr.describe(obj), node)


@_builtin
def _hasattr(tr, node, args, kwargs):
    obj, name = args
    if isinstance(obj, V.Config):
        return name in obj.data
    if isinstance(obj, V.Instance):
        return name in obj.attrs
    raise FrontendError("hasattr of %s is not supported" % tr.describe(obj), node)


@_builtin
def _len(tr, node, args, kwargs):
    (obj,) = args
    if isinstance(obj, V.ModuleList):
        return len(obj.items)
    return _plain(len)(tr, node, args, kwargs)


@_builtin
def _enumerate(tr, node, args, kwargs):
    items = tr.unpack_all(args[0], node)
    return list(enumerate(items, *args[1:]))


@_builtin
def _zip(tr, node, args, kwargs):
    return list(zip(*(tr.unpack_all(a, node) for a in args)))


@_builtin
def _isinstance(tr, node, args, kwargs):
    raise FrontendError("isinstance() is not supported", node)


@_builtin
def _super(tr, node, args, kwargs):
    raise FrontendError("super() is only supported as super().__init__(...)", node)


BUILTINS = {
    "range": _plain(range), "int": _plain(int), "float": _plain(float),
    "bool": _plain(bool), "str": _plain(str), "min": _plain(min), "max": _plain(max),
    "abs": _plain(abs), "round": _plain(round), "tuple": _plain(tuple), "list": _plain(list),
    "dict": _plain(dict), "sum": _plain(sum), "any": _plain(any), "all": _plain(all),
    "getattr": _getattr, "hasattr": _hasattr, "len": _len, "enumerate": _enumerate,
    "zip": _zip, "isinstance": _isinstance, "super": _super,
}


class Source:
    def __init__(self, text, path):
        self.path = path
        try:
            self.tree = ast.parse(text, filename=path)
        except SyntaxError as err:
            raise FrontendError("cannot parse: %s" % err.msg, path=path, line=err.lineno,
                                col=err.offset) from None
        self.aliases = {}       # local name -> dotted import path
        self.classes = {}
        self.functions = {}
        self.constants = {}
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(stmt, ast.ImportFrom):
                for a in stmt.names:
                    self.aliases[a.asname or a.name] = (
                        "%s.%s" % (stmt.module, a.name) if stmt.module else a.name)
            elif isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = stmt
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name):
                try:
                    self.constants[stmt.targets[0].id] = ast.literal_eval(stmt.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    # logger = ..., ACT2FN = {...}: known by name only.
                    self.aliases.setdefault(stmt.targets[0].id, stmt.targets[0].id)

    # Registries the file may define or import (a dict of kernels): known by
    # name, whatever the file puts in them.
    REGISTRIES = ("ACT2FN", "ALL_ATTENTION_FUNCTIONS")

    def global_value(self, name, node):
        if name in self.REGISTRIES and name not in self.functions:
            return V.Dotted(self.aliases.get(name, name))
        if name in self.functions:
            return V.FunctionRef(self.functions[name])
        if name in self.classes:
            return V.ClassRef(self.classes[name])
        if name in self.constants:
            return self.constants[name]
        if name in self.aliases:
            return V.Dotted(self.aliases[name])
        if name in BUILTINS:
            return BUILTINS[name]
        raise FrontendError("name '%s' is not defined (or not a supported builtin)" % name,
                            node)

    def dotted(self, e):
        """The import path an expression names (F.silu -> torch.nn.functional.silu)."""
        parts = []
        while isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        if not isinstance(e, ast.Name):
            return None
        head = self.aliases.get(e.id, e.id)
        return ".".join([head] + parts[::-1])

    def method(self, cls, name, node, required=True):
        seen = set()
        while cls is not None and cls.name not in seen:
            seen.add(cls.name)
            for stmt in cls.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                    return stmt
            # A base class of the file (class B(A)): look there.
            base = None
            for b in cls.bases:
                if isinstance(b, ast.Name) and b.id in self.classes:
                    base = self.classes[b.id]
                    break
            cls = base
        if required:
            raise FrontendError("class has no method '%s'" % name, node)
        return None

    def module_classes(self):
        """Classes that look like nn.Module subclasses, in file order."""
        return [c for c in self.classes.values() if self.method(c, "forward", c,
                                                                required=False)]
