"""A parsed modeling file: its imports, classes, functions and constants."""

import ast
import os

from .errors import FrontendError
from . import module_eval
from . import values as V
from .module_eval import ModuleExpr, Unknown  # noqa: F401 (translate.py's ModuleExpr)


def _builtin(fn):
    fn._tx_builtin = True
    return fn


def _plain(fn):
    """A Python builtin applied to import-time values."""
    @_builtin
    def call(tr, node, args, kwargs):
        def plain(v):
            # A builtin passed on (max(..., key=abs)) is Python's own.
            if callable(v) and hasattr(v, "python"):
                return v.python
            if callable(v) or isinstance(v, (V.FunctionRef, V.ClassRef)):
                raise FrontendError("%s() with a function of the file or a builtin other "
                                    "than a plain one as an argument is not supported"
                                    % fn.__name__, node)
            return v
        args = [plain(v) for v in args]
        kwargs = {k: plain(v) for k, v in kwargs.items()}
        for v in list(args) + list(kwargs.values()):
            if not callable(v) and not tr._python(v, node):
                raise FrontendError("%s() of %s is not supported"
                                    % (fn.__name__, tr.describe(v)), node)
        try:
            return fn(*args, **kwargs)
        except Exception as err:
            raise FrontendError("%s(): %s" % (fn.__name__, err), node) from None
    call.python = fn
    return call


@_builtin
def _getattr(tr, node, args, kwargs):
    _no_kwargs("getattr", kwargs, node)
    if len(args) not in (2, 3) or not isinstance(args[1], str):
        raise FrontendError("getattr(obj, 'name'[, default]) expected", node)
    obj, name = args[0], args[1]
    default = args[2] if len(args) == 3 else V.Unavailable
    if isinstance(obj, V.Config):
        return tr.config_get(obj, name, node, default)
    if isinstance(obj, V.Instance):
        # As obj.name reads it (class attributes, methods and properties
        # too), the default only where Python finds nothing.
        if default is V.Unavailable:
            return tr.instance_attribute(obj, name, node)
        return tr.instance_attribute(obj, name, node, default)
    raise FrontendError("getattr of %s is not supported" % tr.describe(obj), node)


@_builtin
def _hasattr(tr, node, args, kwargs):
    _no_kwargs("hasattr", kwargs, node)
    if len(args) != 2 or not isinstance(args[1], str):
        raise FrontendError("hasattr(obj, 'name') expected", node)
    obj, name = args
    if isinstance(obj, V.Config):
        # As the config object has it: derived keys (Cohere 2's layer_types
        # from sliding_window_pattern), aliases and defaults too.
        from . import table
        return table.config_value(obj.data, name) is not table._NO_VALUE
    if isinstance(obj, V.Instance):
        return (name in obj.attrs or
                tr.src.method(obj.cls, name, node, required=False) is not None or
                tr.src.class_constant(obj.cls, name, node)[0])
    raise FrontendError("hasattr of %s is not supported" % tr.describe(obj), node)


@_builtin
def _len(tr, node, args, kwargs):
    _no_kwargs("len", kwargs, node)
    if len(args) != 1:
        raise FrontendError("len(obj) expected", node)
    (obj,) = args
    if isinstance(obj, V.ModuleList):
        return len(obj.items)
    return _plain(len)(tr, node, args, kwargs)


def _no_kwargs(name, kwargs, node, allowed=()):
    """A keyword argument of a builtin the import does not honour is an
    error, never dropped (enumerate(x, start=1) counted from 0 once)."""
    for k in kwargs:
        if k not in allowed:
            raise FrontendError("%s() with keyword argument '%s' is not supported"
                                % (name, k), node)


@_builtin
def _enumerate(tr, node, args, kwargs):
    _no_kwargs("enumerate", kwargs, node, ("start",))
    if not 1 <= len(args) + len(kwargs) <= 2 or len(args) < 1:
        raise FrontendError("enumerate(iterable, start=0) expected", node)
    items = tr.unpack_all(args[0], node)
    start = args[1] if len(args) == 2 else kwargs.get("start", 0)
    if not isinstance(start, int) or isinstance(start, bool):
        raise FrontendError("enumerate(): start must be an int", node)
    return list(enumerate(items, start))


@_builtin
def _zip(tr, node, args, kwargs):
    _no_kwargs("zip", kwargs, node, ("strict",))
    lists = [tr.unpack_all(a, node) for a in args]
    if kwargs.get("strict") and len({len(x) for x in lists}) > 1:
        raise FrontendError("zip(strict=True): the arguments have different lengths", node)
    return list(zip(*lists))


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
        return any(c.name == t.name for c in tr.src.mro(obj.cls))
    if isinstance(t, V.Dotted) and not t.name.startswith("torch.") and \
            not isinstance(obj, V.Instance):
        return False  # None (no cache), a tensor, a number: not a Cache
    raise FrontendError("isinstance(%s, %s) is not supported"
                        % (tr.describe(obj), tr.describe(t)), node)


@_builtin
def _super(tr, node, args, kwargs):
    raise FrontendError("super() is only supported as super().__init__(...)", node)


@_builtin
def _type(tr, node, args, kwargs):
    """type(x) of a Python value: the builtin of its type (DistilBERT's
    `if type(sa_output) is not tuple:`), compared with `is` to that name."""
    _no_kwargs("type", kwargs, node)
    if len(args) != 1:
        raise FrontendError("only type(x) with one argument is supported", node)
    for builtin, t in PY_TYPES.items():
        if type(args[0]) is t:
            return builtin
    raise FrontendError("type() of %s is not supported (only of a Python value: a "
                        "number, a string, a tuple, a list, a dict)" % tr.describe(args[0]),
                        node)


BUILTINS = {
    "range": _plain(range), "int": _plain(int), "float": _plain(float),
    "bool": _plain(bool), "str": _plain(str), "min": _plain(min), "max": _plain(max),
    "abs": _plain(abs), "round": _plain(round), "tuple": _plain(tuple), "list": _plain(list),
    "dict": _plain(dict), "sum": _plain(sum), "any": _plain(any), "all": _plain(all),
    "set": _plain(set),  # GPT-2's self.pruned_heads = set()
    "divmod": _plain(divmod), "pow": _plain(pow), "sorted": _plain(sorted),
    "getattr": _getattr, "hasattr": _hasattr, "len": _len, "enumerate": _enumerate,
    "zip": _zip, "isinstance": _isinstance, "super": _super, "type": _type,
}
PY_TYPES = {BUILTINS[n]: t for n, t in (("int", int), ("float", float), ("bool", bool),
                                        ("str", str), ("tuple", tuple), ("list", list),
                                        ("dict", dict))}


LOGGING_CALLS = ("warnings.warn",)


def _mangle(name, cls_name):
    """Python's private-name mangling: __x inside class C is _C__x."""
    stripped = cls_name.lstrip("_")
    if not stripped or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    return "_%s%s" % (stripped, name)


class _Mangler(ast.NodeVisitor):
    """Rewrites the identifiers of each class body (its methods too) as
    Python's compiler does: `self.__k` in class Base is `self._Base__k`, so
    a subclass's `self.__k` is another attribute and `self.__helper()` is
    the defining class's."""

    def __init__(self):
        self.cls = None

    def visit_ClassDef(self, node):
        if self.cls is not None:
            node.name = _mangle(node.name, self.cls)
        for d in node.decorator_list + node.bases + node.keywords:
            self.visit(d)
        saved, self.cls = self.cls, node.name
        for stmt in node.body:
            self.visit(stmt)
        self.cls = saved

    def generic_visit(self, node):
        if self.cls is not None:
            for field in ("id", "attr", "arg", "name"):
                value = getattr(node, field, None)
                if isinstance(value, str) and not isinstance(node, ast.alias):
                    setattr(node, field, _mangle(value, self.cls))
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                node.names = [_mangle(n, self.cls) for n in node.names]
            if isinstance(node, ast.alias):
                if node.asname is not None:
                    node.asname = _mangle(node.asname, self.cls)
        super().generic_visit(node)


class Source:
    def __init__(self, text, path):
        self.path = path
        try:
            self.tree = ast.parse(text, filename=path)
        except SyntaxError as err:
            raise FrontendError("cannot parse: %s" % err.msg, path=path, line=err.lineno,
                                col=err.offset) from None
        _Mangler().visit(self.tree)
        # The module-level statements run in order, as Python runs them at
        # import (module_eval.py): each name as the import leaves it.
        stem = os.path.splitext(os.path.basename(path or ""))[0] or "module"
        self.module = module_eval.Module(self.tree, stem, self.REGISTRIES)
        self.aliases = {}       # local name -> dotted import path
        self.classes = {}
        self.functions = {}
        self.constants = {}     # numbers, strings, containers (of classes too)
        # Module-level displays holding what only the translator evaluates
        # (ACT = {"silu": nn.SiLU()}): evaluated when read (ModuleExpr).
        self.module_exprs = {}
        self.unknown = {}       # name -> Unknown: a read is an error
        # Module-level loggers (logger = logging.get_logger(__name__)): their
        # methods (logger.warning_once(...)) do nothing to the model.
        self.loggers = set()
        for name, value in self.module.env.items():
            if isinstance(value, Unknown):
                self.unknown[name] = value
            elif isinstance(value, V.Dotted):
                self.aliases[name] = value.name
                if isinstance(value, module_eval.Logger):
                    self.loggers.add(name)
            elif isinstance(value, V.FunctionRef) and value.name == name:
                self.functions[name] = value.node
            elif isinstance(value, V.ClassRef) and value.name == name:
                self.classes[name] = value.node
            elif isinstance(value, ModuleExpr):
                self.module_exprs[name] = value.node
            else:
                self.constants[name] = value

    # Registries the file may define or import (a dict of kernels): known by
    # name, whatever the file puts in them.
    REGISTRIES = ("ACT2FN", "ALL_ATTENTION_FUNCTIONS")

    def global_value(self, name, node):
        if name in self.REGISTRIES and name not in self.functions and \
                isinstance(self.module.env.get(name, V.Dotted(name)), V.Dotted):
            # (Imported and not changed in place: transformers' table.)
            return V.Dotted(self.aliases.get(name, name))
        if name in self.module.env:
            value = self.module.env[name]
            if isinstance(value, Unknown):
                raise FrontendError(value.message("'%s'" % name), node)
            if isinstance(value, ModuleExpr):
                self.check_fresh(value.versions, "'%s' (line %d)" % (name, value.node.lineno),
                                 node)
                return ModuleExpr(name, value.node)
            return value
        if name in BUILTINS:
            return BUILTINS[name]
        raise FrontendError("name '%s' is not defined (or not a supported builtin)" % name,
                            node)

    def check_fresh(self, versions, what, node):
        """An error if a name `what` reads (a display, a default evaluated
        where it is used) changed after it: Python read it before."""
        stale = self.module.stale(versions)
        if stale is not None:
            raise FrontendError("%s reads '%s', which line %s changes after it, and the "
                                "frontend cannot evaluate it as Python did before; not "
                                "supported" % (what, stale[0], stale[1]), node)

    def default(self, fn, name, node):
        """(True, value) for the default of parameter `name` of `fn` as its
        def computed it (Python evaluates a default once, when the def runs);
        (False, None) where the caller evaluates it (a def not run at import,
        or a default it could not compute whose names are bound as then);
        an error at the call `node` where it is not known."""
        record = self.module.defaults.get(fn, {})
        if name not in record:
            return False, None
        value = record[name]
        what = "the default of '%s' of %s (line %d)" % (name, fn.name, fn.lineno)
        if isinstance(value, Unknown):
            raise FrontendError(value.message(what), node)
        if isinstance(value, module_eval.Lazy):
            self.check_fresh(value.versions, what, node)
            return False, None
        return True, value

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
        if e.id in self.unknown:
            return None  # not known at import: names nothing
        head = self.aliases.get(e.id, e.id)
        return ".".join([head] + parts[::-1])

    def method(self, cls, name, node, required=True):
        owner, fn = self.method_owner(cls, name)
        if fn is None and required:
            raise FrontendError("class has no method '%s'" % name, node)
        return fn

    def method_owner(self, cls, name):
        """(the class of the file defining method `name` for `cls`, that
        method): the first class of `cls`'s method resolution order (Python's
        C3, over the classes of the file) whose namespace has the name, or
        (None, None). A class's name is what its body (and the module after
        it: Cls.forward = f) bound last."""
        for c in self.mro(cls):
            ns = self.module.class_ns.get(c, {})
            if name in ns:
                value = ns[name]
                if isinstance(value, Unknown):
                    raise FrontendError(value.message("'%s' of class %s" % (name, c.name)),
                                        path=self.path, line=value.line)
                return (c, value.node) if isinstance(value, V.FunctionRef) else (None, None)
        return None, None

    class Property:
        def __init__(self, getter, setter, cached):
            self.getter, self.setter, self.cached = getter, setter, cached

    def property_defs(self, cls, name, node):
        """The property `name` of `cls` (a Property: its getter's and
        setter's defs, and whether it is a functools.cached_property), when
        the def the name resolves to is one (@property, @cached_property,
        @name.setter/.getter/.deleter); None otherwise."""
        owner, fn = self.method_owner(cls, name)
        if fn is None:
            return None
        chain = ("%s.setter" % name, "%s.getter" % name, "%s.deleter" % name)
        kinds = [self.dotted(d) for d in fn.decorator_list]
        if not any(k in ("property", "functools.cached_property", "cached_property") + chain
                   for k in kinds):
            return None
        getter = setter = None
        cached = False
        # The class body's defs of that name, in order, as Python builds the
        # property object (each @name.setter copies the one before).
        for stmt in owner.body:
            if not isinstance(stmt, ast.FunctionDef) or stmt.name != name:
                continue
            ks = [self.dotted(d) for d in stmt.decorator_list]
            if "property" in ks:
                getter, setter, cached = stmt, None, False
            elif "functools.cached_property" in ks or "cached_property" in ks:
                getter, setter, cached = stmt, None, True
            elif chain[0] in ks:
                setter = stmt
            elif chain[1] in ks:
                getter = stmt
            elif chain[2] in ks:
                pass
            else:
                getter = setter = None  # a plain def rebinds the name
            if stmt is fn:
                break
        if getter is None and setter is None:
            raise FrontendError("'%s' of class %s: a property the import cannot follow"
                                % (name, owner.name), node)
        return Source.Property(getter, setter, cached)

    def mro(self, cls):
        """`cls` and the classes of the file it derives from, in Python's
        method resolution order."""
        if cls not in self.module.class_bases:
            return [cls]
        return self.module.mro(cls)

    def next_in_mro(self, inst_cls, after, name):
        """What super() in class `after` finds for `name` on an instance of
        `inst_cls`: (the class after `after` in inst_cls's MRO that defines
        `name`, its def) or (None, None)."""
        order = self.mro(inst_cls)
        if after not in order:
            order = self.mro(after)
        for c in order[order.index(after) + 1:]:
            value = self.module.class_ns.get(c, {}).get(name)
            if value is not None:
                if isinstance(value, Unknown):
                    raise FrontendError(value.message("'%s' of class %s" % (name, c.name)),
                                        path=self.path, line=value.line)
                return (c, value.node) if isinstance(value, V.FunctionRef) else (None, None)
        return None, None

    def class_constant(self, cls, name, node=None):
        """(True, value) for a class attribute `name` of the class (or of a
        base class of the file) as the import leaves it: its body run as
        Python runs it, then the module's statements after it (Cls.k = 9.0);
        (False, None) when it is not there or not a value (a method, an
        import); an error (at `node`) when it is not known."""
        value = self.module.class_attr(cls, name)
        if isinstance(value, Unknown):
            raise FrontendError(value.message("class attribute '%s' of %s" % (name, cls.name)),
                                node, path=None if node is not None else self.path,
                                line=None if node is not None else value.line)
        if value is None or isinstance(value, (V.FunctionRef, V.Dotted, ModuleExpr)):
            return False, None
        return True, value

    def module_classes(self):
        """Classes that look like nn.Module subclasses, in file order."""
        return [c for c in self.classes.values() if self.method(c, "forward", c,
                                                                required=False)]
