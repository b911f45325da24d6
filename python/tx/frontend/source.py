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
        # As the config object has it: derived keys (Cohere 2's layer_types
        # from sliding_window_pattern), aliases and defaults too.
        from . import table
        return table.config_value(obj.data, name) is not table._NO_VALUE
    if isinstance(obj, V.Instance):
        return (name in obj.attrs or
                tr.src.method(obj.cls, name, node, required=False) is not None or
                tr.src.class_constant(obj.cls, name)[0])
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


# isinstance(x, T) for the T a modeling file tests.
_TENSOR_TYPES = ("torch.Tensor", "torch.FloatTensor")
_MODULE_TYPES = ("torch.nn.Module", "torch.nn.modules.module.Module")


@_builtin
def _isinstance(tr, node, args, kwargs):
    """isinstance(x, T) at import: T a Python type, torch.Tensor, nn.Module,
    a class of the file (x a module of it or of a subclass), or an imported
    class not of torch (Cache, DynamicCache) and x not a module of the file
    (a None cache, a tensor, a number: False)."""
    if len(args) != 2 or kwargs:
        raise FrontendError("isinstance(obj, type) expected", node)
    obj, types = args
    types = types if isinstance(types, tuple) else (types,)
    return any(_is_instance(tr, obj, t, node) for t in types)


def _is_instance(tr, obj, t, node):
    python = tr._python(obj, node) and not isinstance(
        obj, (V.Unavailable, V.Config, V.Dotted, V.FunctionRef, V.ClassRef, V.BoundMethod))
    if t in PY_TYPES:
        return python and isinstance(obj, PY_TYPES[t])
    if isinstance(t, V.Dotted) and t.name in _TENSOR_TYPES:
        return isinstance(obj, V.Tensor)
    if isinstance(t, V.Dotted) and t.name in _MODULE_TYPES:
        return isinstance(obj, (V.Instance, V.Spec, V.Activation, V.Identity,
                                V.SoftmaxModule, V.ModuleList))
    if isinstance(t, V.ClassRef):
        if not isinstance(obj, V.Instance):
            return False
        cls, seen = obj.cls, set()
        while cls is not None and cls.name not in seen:
            if cls.name == t.name:
                return True
            seen.add(cls.name)
            cls = next((tr.src.classes[b.id] for b in cls.bases
                        if isinstance(b, ast.Name) and b.id in tr.src.classes), None)
        return False
    if isinstance(t, V.Dotted) and not t.name.startswith("torch.") and \
            not isinstance(obj, V.Instance):
        return False  # None (no cache), a tensor, a number: not a Cache
    raise FrontendError("isinstance(%s, %s) is not supported"
                        % (tr.describe(obj), tr.describe(t)), node)


@_builtin
def _super(tr, node, args, kwargs):
    raise FrontendError("super() is only supported as super().__init__(...)", node)


BUILTINS = {
    "range": _plain(range), "int": _plain(int), "float": _plain(float),
    "bool": _plain(bool), "str": _plain(str), "min": _plain(min), "max": _plain(max),
    "abs": _plain(abs), "round": _plain(round), "tuple": _plain(tuple), "list": _plain(list),
    "dict": _plain(dict), "sum": _plain(sum), "any": _plain(any), "all": _plain(all),
    "set": _plain(set),  # GPT-2's self.pruned_heads = set()
    "getattr": _getattr, "hasattr": _hasattr, "len": _len, "enumerate": _enumerate,
    "zip": _zip, "isinstance": _isinstance, "super": _super,
}
PY_TYPES = {BUILTINS[n]: t for n, t in (("int", int), ("float", float), ("bool", bool),
                                        ("str", str), ("tuple", tuple), ("list", list),
                                        ("dict", dict))}


class ModuleExpr:
    """A module-level display (a dict, list or tuple of names) not yet
    evaluated: the translator evaluates it where it is read."""

    def __init__(self, name, node):
        self.name, self.node = name, node


LOGGING_CALLS = ("warnings.warn",)


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
        # Module-level displays of names (ATTENTION_CLASSES = {"eager":
        # LlamaAttention}): evaluated when read (ModuleExpr).
        self.module_exprs = {}
        # Module-level loggers (logger = logging.get_logger(__name__)): their
        # methods (logger.warning_once(...)) do nothing to the model.
        self.loggers = set()
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
                    name = stmt.targets[0].id
                    self.aliases.setdefault(name, name)
                    if isinstance(stmt.value, (ast.Dict, ast.List, ast.Tuple, ast.Set)) and \
                            name not in self.REGISTRIES:
                        self.module_exprs[name] = stmt.value
                    elif isinstance(stmt.value, ast.Call) and (
                            self.dotted(stmt.value.func) or "").rsplit(".", 1)[-1] in \
                            ("get_logger", "getLogger"):
                        self.loggers.add(name)

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
        if name in self.module_exprs:
            return ModuleExpr(name, self.module_exprs[name])
        if name in self.aliases:
            return V.Dotted(self.aliases[name])
        if name in BUILTINS:
            return BUILTINS[name]
        raise FrontendError("name '%s' is not defined (or not a supported builtin)" % name,
                            node)

    def is_logging(self, name):
        """Whether the call of dotted `name` only logs or warns
        (logger.warning_once(...), warnings.warn(...), logging.info(...))."""
        head, _, rest = name.partition(".")
        return (head in self.loggers and rest != "") or name in LOGGING_CALLS or \
            name.startswith("logging.") and name.count(".") == 1

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
        owner, fn = self.method_owner(cls, name)
        if fn is None and required:
            raise FrontendError("class has no method '%s'" % name, node)
        return fn

    def method_owner(self, cls, name):
        """(the class of the file defining method `name` for `cls`, that
        method): `cls` itself or its first base of the file that has it
        (following first bases of the file), or (None, None)."""
        seen = set()
        while cls is not None and cls.name not in seen:
            seen.add(cls.name)
            # The last definition in the body is the one the class binds.
            for stmt in reversed(cls.body):
                if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                    return cls, stmt
            # A base class of the file (class B(A)): look there.
            base = None
            for b in cls.bases:
                if isinstance(b, ast.Name) and b.id in self.classes:
                    base = self.classes[b.id]
                    break
            cls = base
        return None, None

    def class_constant(self, cls, name):
        """(True, value) for a class attribute `name` of the class body (or
        of a base class of the file) bound to a literal, run as Python runs
        the body: the last assignment, `+=`-style updates by literals
        applied; (False, None) when it is not there or not such a value."""
        import operator
        ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
               ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv,
               ast.Mod: operator.mod, ast.Pow: operator.pow}
        seen = set()
        while cls is not None and cls.name not in seen:
            seen.add(cls.name)
            found, value = False, None
            for stmt in cls.body:
                if isinstance(stmt, ast.Assign):
                    targets = stmt.targets
                elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
                    targets = [stmt.target]
                elif isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                    targets = [ast.Name(id=stmt.name)]
                else:
                    continue
                if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    continue
                if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
                    continue
                try:
                    literal = ast.literal_eval(stmt.value) if not isinstance(
                        stmt, (ast.FunctionDef, ast.ClassDef)) else None
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    return False, None
                if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) or len(targets) != 1:
                    return False, None
                if isinstance(stmt, ast.AugAssign):
                    if not found or type(stmt.op) not in ops:
                        return False, None
                    try:
                        value = ops[type(stmt.op)](value, literal)
                    except Exception:
                        return False, None
                else:
                    value = literal
                found = True
            if found:
                return True, value
            cls = next((self.classes[b.id] for b in cls.bases
                        if isinstance(b, ast.Name) and b.id in self.classes), None)
        return False, None

    def module_classes(self):
        """Classes that look like nn.Module subclasses, in file order."""
        return [c for c in self.classes.values() if self.method(c, "forward", c,
                                                                required=False)]
