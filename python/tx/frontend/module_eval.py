"""Runs the module-level statements of a modeling file in order, as Python
runs them at import, over the values the frontend knows: numbers, strings
and containers of them, imports (V.Dotted), the file's functions and
classes (V.FunctionRef, V.ClassRef). A class body runs at its position into
the class's namespace; a def evaluates its defaults where it stands (Python
evaluates them once, when the def runs).

A statement it cannot evaluate makes what it may bind or change unknown
(Unknown): a later read of that is an error naming the statement, never a
stale value. What a statement may change: the names it binds (in either
branch of an `if` whose test is not known, in a loop over what is not
known, in a `try`, a `with`); a container it changes in place, or passes
to a call the frontend does not run; a class whose attributes it sets; the
names a function of the file it calls declares `global`, and the containers
and classes that function reads; any name at all for exec, eval, globals(),
vars(), sys.modules. Assumed to change nothing: a call of an import that
gets no known container (`logger = logging.get_logger(__name__)`,
`ALL_LAYERNORM_LAYERS.append(LlamaRMSNorm)`, decorators of imports): a
class passed to one is taken as registered, not changed, and such a call
does not replace methods."""

import ast
import builtins
import itertools
import math
import operator

from . import values as V

LIMIT = 100000  # iterations of a loop or comprehension the evaluator runs


class Unknown:
    """What a name holds after `stmt` (line `line`), which may change it and
    which the frontend cannot evaluate (`why`: what it cannot evaluate);
    `aliases`: the containers the statement read, which it may hold (a
    change through it may change them)."""

    def __init__(self, line, stmt, why, aliases=()):
        self.line, self.stmt, self.why = line, stmt, why
        self.aliases = list(aliases)

    def message(self, subject):
        return ("%s is not known at import: line %d (`%s`) may change it and the "
                "frontend cannot evaluate %s; not supported"
                % (subject, self.line, self.stmt, self.why))



def starred_parts(items, targets, star):
    """The values `targets` names with the one at `star` starred get from
    `items`, as Python unpacks `a, *rest, z = items` (the starred one a
    list); None when there are too few."""
    items = list(items)
    after = targets - star - 1
    if len(items) < targets - 1:
        return None
    return items[:star] + [items[star:len(items) - after]] + items[len(items) - after:]

class ModuleExpr:
    """A module-level display (dict, list, tuple, set) holding what only the
    translator evaluates (nn.SiLU()): evaluated where it is read, valid while
    the names it reads are bound as at its line (`versions`)."""

    def __init__(self, name, node, versions=None, aliases=()):
        self.name, self.node = name, node
        self.versions = versions or {}
        self.aliases = list(aliases)  # the containers it holds


class Logger(V.Dotted):
    """logger = logging.get_logger(__name__): its methods only log."""


class Lazy:
    """A default its def could not compute: the translator evaluates it at
    the call, valid while the names it reads are bound as at the def."""

    def __init__(self, node, versions):
        self.node, self.versions = node, versions


class _NotKnown(Exception):
    def __init__(self, what, unknown=None):
        super().__init__(what)
        self.what, self.unknown = what, unknown  # unknown: the Unknown read


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Builtin:
    def __init__(self, fn, plain=True):
        self.fn, self.plain = fn, plain  # plain: only plain values as arguments


class _Method:
    def __init__(self, obj, name):
        self.obj, self.name = obj, name


_SETATTR, _DELATTR = object(), object()  # setattr/delattr of a class: modeled
_BUILTINS = {n: _Builtin(getattr(builtins, n)) for n in (
    "abs", "all", "any", "bool", "chr", "divmod", "float", "int", "max", "min", "ord",
    "pow", "range", "repr", "round", "sorted", "str", "sum", "hex", "oct", "bin")}
_BUILTINS.update({n: _Builtin(getattr(builtins, n), plain=False) for n in (
    "len", "list", "tuple", "dict", "set", "frozenset", "enumerate", "zip", "reversed")})
_BUILTINS["print"] = _Builtin(lambda *a, **k: None, plain=False)
_BUILTINS["setattr"], _BUILTINS["delattr"] = _SETATTR, _DELATTR
# Calls that may rebind any name of the module.
_ANY_NAME = ("exec", "eval", "globals", "vars", "locals", "__import__")
_PURE_METHODS = ("get", "keys", "values", "items", "copy", "count", "index")
_CONTAINERS = (list, dict, set, bytearray)
_PLAIN = (type(None), bool, int, float, complex, str, bytes, range, type(Ellipsis))

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv,
           ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
           ast.RShift: operator.rshift, ast.BitOr: operator.or_,
           ast.BitXor: operator.xor, ast.BitAnd: operator.and_}
_IOPS = {ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul,
         ast.Div: operator.itruediv, ast.FloorDiv: operator.ifloordiv,
         ast.Mod: operator.imod, ast.Pow: operator.ipow, ast.LShift: operator.ilshift,
         ast.RShift: operator.irshift, ast.BitOr: operator.ior,
         ast.BitXor: operator.ixor, ast.BitAnd: operator.iand}
_CMPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
         ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
         ast.Is: operator.is_, ast.IsNot: operator.is_not,
         ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_UNOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
_STATEMENTS = {"Try": "which statements of a `try` run (an import in it may fail)",
               "TryStar": "which statements of a `try` run",
               "With": "what a `with` block's context manager does",
               "AsyncWith": "an `async with`", "AsyncFor": "an `async for`",
               "Match": "which case of a `match` runs"}


def _text(node):
    lines = ast.unparse(node).splitlines() or [""]
    text = lines[0] + (" ..." if len(lines) > 1 else "")
    return text if len(text) <= 72 else text[:69] + "..."


def _parts(v, depth=0):
    """v and the values it holds (containers, recursively)."""
    yield v
    if depth < 20 and isinstance(v, (list, tuple, set, frozenset, dict)):
        for x in (list(v.keys()) + list(v.values())) if isinstance(v, dict) else v:
            yield from _parts(x, depth + 1)


def _plain(v):
    return all(isinstance(x, _PLAIN + (list, tuple, set, frozenset, dict))
               for x in _parts(v))


def _opaque(v):
    """An import's value is not known: not compared, hashed or tested."""
    return any(isinstance(x, V.Dotted) for x in _parts(v))


def _mutables(v):
    """The containers a change through v may change."""
    out = []
    for x in _parts(v):
        if isinstance(x, _CONTAINERS + (ModuleExpr,)):
            out.append(x)
        if isinstance(x, (ModuleExpr, Unknown)):
            out += x.aliases
    return out


def _reaches(v, obj):
    return any(x is obj for x in _parts(v))


def _root(e):
    """The name an expression x.a[i].b(...) starts from, and its attributes."""
    attrs = []
    while isinstance(e, (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)):
        if isinstance(e, ast.Attribute):
            attrs.append(e.attr)
        e = e.func if isinstance(e, ast.Call) else e.value
    return (e.id if isinstance(e, ast.Name) else None), attrs


def _jumps(s):
    """A break or continue of an enclosing loop in s."""
    todo = list(s.orelse) if isinstance(s, (ast.For, ast.While, ast.AsyncFor)) else [s]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Break, ast.Continue)):
            return True
        for c in ast.iter_child_nodes(n):
            if isinstance(c, (ast.For, ast.While, ast.AsyncFor)):
                todo.extend(c.orelse)
            elif not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                    ast.Lambda)):
                todo.append(c)
    return False


def _effects(node):
    """(names bound, {name: the imports binding it}, targets changed in
    place, calls) of running `node`; def and lambda bodies do not run there,
    a class body's names are its."""
    names, imports, changed, calls = set(), {}, [], []

    def visit(n, local):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if not isinstance(n, ast.Lambda):
                if not local:
                    names.add(n.name)
                for d in n.decorator_list:
                    visit(d, local)
            for d in n.args.defaults + [d for d in n.args.kw_defaults if d is not None]:
                visit(d, local)
            return
        if isinstance(n, ast.ClassDef):
            if not local:
                names.add(n.name)
            for x in n.decorator_list + n.bases + n.keywords + n.body:
                visit(x, local or x in n.body)
            return
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            if not local:
                names.add(n.id)
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and \
                isinstance(n.ctx, (ast.Store, ast.Del)):
            changed.append(n)
        elif isinstance(n, ast.Import) and not local:
            for a in n.names:
                top = a.name.split(".")[0]
                imports.setdefault(a.asname or top, set()).add(a.name if a.asname else top)
        elif isinstance(n, ast.ImportFrom) and not local:
            for a in n.names:
                if a.name == "*":
                    names.add("*")
                imports.setdefault(a.asname or a.name, set()).add(
                    "%s.%s" % (n.module, a.name) if n.module else a.name)
        elif isinstance(n, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and n.name \
                and not local:
            names.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest and not local:
            names.add(n.rest)
        elif isinstance(n, ast.Call):
            calls.append(n)
        for c in ast.iter_child_nodes(n):
            visit(c, local)
    visit(node, False)
    return names, imports, changed, calls


def c3_mro(cls, bases_of):
    """Python's method resolution order (C3) of class `cls` over the classes
    of the file: [cls, ...]; `bases_of(c)` lists c's bases that are classes
    of the file (the others, nn.Module and imports, end the chain). None
    where Python would refuse the class (an inconsistent order, a cycle)."""
    def linear(c, active):
        if c in active:
            return None
        bases = bases_of(c)
        seqs = []
        for b in bases:
            m = linear(b, active | {c})
            if m is None:
                return None
            seqs.append(list(m))
        seqs.append(list(bases))
        result = [c]
        seqs = [q for q in seqs if q]
        while seqs:
            head = next((q[0] for q in seqs if not any(q[0] in t[1:] for t in seqs)), None)
            if head is None:
                return None
            result.append(head)
            seqs = [[x for x in q if x is not head] for q in seqs]
            seqs = [q for q in seqs if q]
        return result
    return linear(cls, frozenset())


class Module:
    """The module's names at import end (env), each class's namespace
    (class_ns; class_unknown: a class any attribute of which may have been
    set by what the frontend cannot evaluate) and each def's defaults."""

    def __init__(self, tree, stem, registries):
        self.stem, self.registries = stem, registries
        self.env, self.version, self.changed_at = {}, {}, {}
        self.class_ns, self.class_unknown, self.class_bases = {}, {}, {}
        self.defaults = {}  # FunctionDef -> {parameter: value, Unknown or Lazy}
        self.run(tree.body, [self.env])

    # -- names -----------------------------------------------------------------
    def bind(self, scope, name, value, line):
        ns = scope[0]
        if ns is self.env:
            if name in self.registries and not isinstance(value, (V.FunctionRef, Unknown)) and \
                    not (name == "ACT2FN" and not isinstance(value, V.Dotted)):
                # Known by name, whatever the file puts in them; but an
                # ACT2FN the file binds itself (ACT2FN = {"silu": nn.SiLU()})
                # is its value as evaluated: a display read as written, what
                # the evaluator cannot follow unknown (an error where read).
                old = ns.get(name)
                value = value if isinstance(value, V.Dotted) else \
                    old if isinstance(old, V.Dotted) else V.Dotted(name)
            self.version[name] = self.version.get(name, 0) + 1
            self.changed_at[name] = line
        ns[name] = value

    def lookup(self, name, scope):
        for ns in scope:
            if name in ns:
                return ns[name]
        if name == "__name__":
            return self.stem  # not "__main__": the file is imported
        if name in _BUILTINS:
            return _BUILTINS[name]
        raise _NotKnown("the builtin %s" % name if hasattr(builtins, name) else
                        "'%s', which is not defined there" % name)

    def peek(self, name, scope):
        try:
            return self.lookup(name, scope) if name else None
        except _NotKnown:
            return None

    def versions(self, node):
        return {n.id: self.version.get(n.id, 0) for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

    def stale(self, versions):
        """A name of `versions` bound again since (with the line), or None."""
        for name, version in versions.items():
            if self.version.get(name, 0) != version:
                return name, self.changed_at.get(name)
        return None

    def class_attr(self, cls, name):
        """What `cls.name` reads, through the bases of the file; None if
        not there."""
        for c in self.mro(cls):
            if c in self.class_unknown:
                return self.class_unknown[c]
            ns = self.class_ns.get(c, {})
            if name in ns:
                return ns[name]
        return None

    def mro(self, cls):
        """The classes of the file `cls.name` looks in, in Python's order (C3
        over the bases the class statement named); [cls] when Python would
        refuse the class."""
        return c3_mro(cls, lambda c: [b for b in self.class_bases.get(c, ()) if b is not None]) \
            or [cls]

    def changed(self, obj, line):
        """A container changed in place: what reads a name holding it where
        it is used (a display, a default) reads another value."""
        for name, v in self.env.items():
            if _reaches(v, obj):
                self.version[name] = self.version.get(name, 0) + 1
                self.changed_at[name] = line

    def class_changed(self, cls, line):
        if isinstance(self.env.get(cls.name), V.ClassRef) and \
                self.env[cls.name].node is cls:
            self.bind([self.env], cls.name, self.env[cls.name], line)

    # -- statements ------------------------------------------------------------
    def run(self, body, scope):
        for s in body:
            try:
                try:
                    self.stmt(s, scope)
                except RecursionError:
                    raise _NotKnown("what nests too deeply") from None
            except _NotKnown as err:
                if _jumps(s):
                    raise  # the enclosing loop's course is not known either
                self.poison(s, scope, Unknown(s.lineno, _text(s), err.what,
                                              self.aliased(s, scope)))

    def aliased(self, node, scope):
        """The containers the names `node` reads hold (or may)."""
        out = {}
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                out.update((id(m), m) for m in _mutables(self.peek(n.id, scope)))
        return list(out.values())

    def stmt(self, s, scope):
        if isinstance(s, ast.Expr):
            if not isinstance(s.value, ast.Constant):
                self.eval(s.value, scope)
        elif isinstance(s, (ast.Assign, ast.AnnAssign)):
            if s.value is None:
                return  # x: int
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and \
                    isinstance(s.value, ast.Call) and (self.dotted(s.value.func, scope) or "") \
                    .rsplit(".", 1)[-1] in ("get_logger", "getLogger"):
                self.bind(scope, targets[0].id, Logger(targets[0].id), s.lineno)
                return
            value = self.value(s.value, scope, s)
            for t in targets:
                self.assign(t, value, scope, s)
        elif isinstance(s, ast.AugAssign):
            self.aug_assign(s, scope)
        elif isinstance(s, ast.If):
            self.run(s.body if self.truth(self.eval(s.test, scope), s.test) else s.orelse,
                     scope)
        elif isinstance(s, ast.For):
            self.run_for(s, scope)
        elif isinstance(s, ast.While):
            self.run_while(s, scope)
        elif isinstance(s, ast.Break):
            raise _Break()
        elif isinstance(s, ast.Continue):
            raise _Continue()
        elif isinstance(s, ast.Import):
            for a in s.names:
                top = a.name.split(".")[0]
                self.bind(scope, a.asname or top, V.Dotted(a.name if a.asname else top),
                          s.lineno)
        elif isinstance(s, ast.ImportFrom):
            for a in s.names:
                if a.name == "*":
                    raise _NotKnown("what `from %s import *` binds" % s.module)
                self.bind(scope, a.asname or a.name, V.Dotted(
                    "%s.%s" % (s.module, a.name) if s.module else a.name), s.lineno)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.record_defaults(s, scope)
            self.bind(scope, s.name, self.decorated(s, V.FunctionRef(s), scope), s.lineno)
        elif isinstance(s, ast.ClassDef):
            self.define_class(s, scope)
        elif isinstance(s, ast.Delete):
            for t in s.targets:
                self.delete(t, scope, s)
        elif isinstance(s, ast.Assert):
            self.eval(s.test, scope)
        elif not isinstance(s, (ast.Pass, ast.Global, ast.Nonlocal, ast.Raise)):
            raise _NotKnown(_STATEMENTS.get(type(s).__name__,
                                            "a `%s` statement" % type(s).__name__))

    def value(self, e, scope, s):
        value = self.lookup(e.id, scope) if isinstance(e, ast.Name) else None
        if isinstance(value, (Unknown, ModuleExpr)):
            return value  # an alias: the same
        try:
            value = self.eval(e, scope)
        except _NotKnown as err:
            if not isinstance(e, (ast.Dict, ast.List, ast.Tuple, ast.Set)) or \
                    err.unknown is not None:
                raise
            # The translator evaluates it where it is read (ATTENTION_CLASSES
            # = {"eager": ..., "x": nn.SiLU()}).
            self.poison(e, scope, Unknown(s.lineno, _text(s), err.what))
            return ModuleExpr(None, e, self.versions(e), self.aliased(e, scope))
        self.storable(value, e)
        return value

    def storable(self, value, e):
        if any(isinstance(x, (_Builtin, _Method)) or x in (_SETATTR, _DELATTR)
               for x in _parts(value)):
            raise _NotKnown("%s (a builtin function as a value)" % _text(e))

    def assign(self, t, value, scope, s):
        if isinstance(t, ast.Name):
            self.bind(scope, t.id, value, s.lineno)
            return
        if isinstance(value, Unknown):
            raise _NotKnown("what it assigns, not known since line %d" % value.line, value)
        if isinstance(t, ast.Attribute) and isinstance(value, ModuleExpr):
            obj = self.eval(t.value, scope)
            if isinstance(obj, V.ClassRef):
                self.class_ns[obj.node][t.attr] = value
                self.class_changed(obj.node, s.lineno)
                return
        if isinstance(value, ModuleExpr):
            raise _NotKnown("a display evaluated only where it is read")
        if isinstance(t, (ast.Tuple, ast.List)):
            items = self.items(value, t)
            stars = [i for i, x in enumerate(t.elts) if isinstance(x, ast.Starred)]
            elts = [x.value if isinstance(x, ast.Starred) else x for x in t.elts]
            if stars:
                parts = starred_parts(items, len(t.elts), stars[0])
                if parts is None:
                    raise _NotKnown("an unpacking of %d values" % len(items))
                items = parts
            if len(items) != len(elts):
                raise _NotKnown("an unpacking of %d values into %d" % (len(items), len(elts)))
            for x, item in zip(elts, items):
                self.assign(x, item, scope, s)
        elif isinstance(t, ast.Subscript):
            obj, key = self.eval(t.value, scope), self.index(t.slice, scope)
            if not isinstance(obj, (list, dict, bytearray)):
                raise _NotKnown("an assignment to an item of %s" % _text(t.value))
            self.call(lambda: obj.__setitem__(key, value), t)
            self.changed(obj, s.lineno)
        elif isinstance(t, ast.Attribute):
            obj = self.eval(t.value, scope)
            if not isinstance(obj, V.ClassRef):
                raise _NotKnown("an assignment to %s" % _text(t))
            self.class_ns[obj.node][t.attr] = value
            self.class_changed(obj.node, s.lineno)
        else:
            raise _NotKnown("an assignment to %s" % _text(t))

    def aug_assign(self, s, scope):
        op, t = _IOPS[type(s.op)], s.target
        if isinstance(t, ast.Name):
            current = self.eval(ast.Name(id=t.id, ctx=ast.Load()), scope)
            self.bind(scope, t.id, self.binop(op, current, self.eval(s.value, scope), s),
                      s.lineno)
        elif isinstance(t, ast.Subscript):
            obj, key = self.eval(t.value, scope), self.index(t.slice, scope)
            if not isinstance(obj, (list, dict, bytearray)):
                raise _NotKnown("an update of an item of %s" % _text(t.value))
            current = self.call(lambda: obj[key], t)
            new = self.binop(op, current, self.eval(s.value, scope), s)
            self.call(lambda: obj.__setitem__(key, new), t)
            self.changed(obj, s.lineno)
        elif isinstance(t, ast.Attribute):
            obj = self.eval(t.value, scope)
            if not isinstance(obj, V.ClassRef):
                raise _NotKnown("an update of %s" % _text(t))
            current = self.attribute(obj, t.attr, t)
            self.class_ns[obj.node][t.attr] = self.binop(op, current,
                                                         self.eval(s.value, scope), s)
            self.class_changed(obj.node, s.lineno)
        else:
            raise _NotKnown("an update of %s" % _text(t))

    def delete(self, t, scope, s):
        if isinstance(t, ast.Name):
            if t.id not in scope[0]:
                raise _NotKnown("`del %s` of a name not bound" % t.id)
            self.bind(scope, t.id, None, s.lineno)
            del scope[0][t.id]
        elif isinstance(t, (ast.Tuple, ast.List)):
            for x in t.elts:
                self.delete(x, scope, s)
        elif isinstance(t, ast.Subscript):
            obj, key = self.eval(t.value, scope), self.index(t.slice, scope)
            if not isinstance(obj, (list, dict, bytearray)):
                raise _NotKnown("`del` of an item of %s" % _text(t.value))
            self.call(lambda: obj.__delitem__(key), t)
            self.changed(obj, s.lineno)
        elif isinstance(t, ast.Attribute) and \
                isinstance(self.eval(t.value, scope), V.ClassRef) and \
                t.attr in self.class_ns[self.eval(t.value, scope).node]:
            cls = self.eval(t.value, scope).node
            del self.class_ns[cls][t.attr]
            self.class_changed(cls, s.lineno)
        else:
            raise _NotKnown("`del %s`" % _text(t))

    def run_for(self, s, scope):
        for item in self.items(self.eval(s.iter, scope), s.iter):
            self.assign(s.target, item, scope, s)
            try:
                self.run(s.body, scope)
            except _Break:
                break
            except _Continue:
                continue
        else:
            self.run(s.orelse, scope)

    def run_while(self, s, scope):
        for count in itertools.count():
            if not self.truth(self.eval(s.test, scope), s.test):
                self.run(s.orelse, scope)
                return
            if count >= LIMIT:
                raise _NotKnown("a `while` loop of more than %d iterations" % LIMIT)
            try:
                self.run(s.body, scope)
            except _Break:
                return
            except _Continue:
                continue

    def record_defaults(self, fn, scope):
        """The defaults of `fn` as its def computes them; one it cannot is
        evaluated at the call (Lazy), if no name it reads changes since."""
        a = fn.args
        params = list(getattr(a, "posonlyargs", [])) + list(a.args)
        pairs = list(zip(params[len(params) - len(a.defaults):], a.defaults)) + [
            (p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        record = self.defaults.setdefault(fn, {})
        for p, d in pairs:
            try:
                value = self.eval(d, scope)
                self.storable(value, d)
                record[p.arg] = value
            except _NotKnown as err:
                unknown = Unknown(d.lineno, _text(fn), err.what)
                self.poison(d, scope, unknown)
                reads = self.versions(d)
                if err.unknown is not None:
                    record[p.arg] = err.unknown  # it reads a name not known
                elif any(n in ns for n in reads for ns in scope[:-1]):
                    # A class attribute (the translator would read the
                    # module's name).
                    record[p.arg] = unknown
                else:
                    record[p.arg] = Lazy(d, reads)

    def decorated(self, node, value, scope):
        """The value a def or class binds: a decorator of the file may return
        anything (unknown); one imported is taken to return the def."""
        for d in node.decorator_list:
            unknown = Unknown(d.lineno, "@" + _text(d), "what this decorator returns")
            self.poison(d, scope, unknown)  # the calls in it
            head = d.func if isinstance(d, ast.Call) else d
            file_code = self.peek(head.id, scope) if isinstance(head, ast.Name) else None
            if isinstance(file_code, (V.FunctionRef, V.ClassRef)):
                self.poison_reached([file_code.node], [], unknown)
                value = unknown
        return value

    def define_class(self, c, scope):
        ns = {}
        self.class_ns[c] = ns
        bases = [self.peek(b.id, scope) if isinstance(b, ast.Name) else None
                 for b in c.bases]
        self.class_bases[c] = [b.node if isinstance(b, V.ClassRef) else None for b in bases]
        for e in c.bases + [k.value for k in c.keywords]:
            self.poison(e, scope, Unknown(c.lineno, _text(c), "its bases"))
        self.run(c.body, [ns, self.env])
        self.bind(scope, c.name, self.decorated(c, V.ClassRef(c), scope), c.lineno)

    # -- what a statement the evaluator cannot run may change -------------------
    def poison(self, node, scope, unknown):
        names, imports, changed, calls = _effects(node)
        for name, paths in imports.items():
            old = self.peek(name, scope)
            if name in names or not (isinstance(old, V.Dotted) and paths == {old.name}):
                names.add(name)  # (`import torch.fx` leaves torch as it is)
        for name in sorted(names):
            if name == "*":
                self.poison_all(unknown)
            else:
                self.bind(scope, name, unknown, unknown.line)
        for t in changed:
            self.poison_root(t, scope, unknown, store=True)
        for c in calls:
            self.poison_call(c, scope, unknown)

    def poison_all(self, unknown):
        for name in list(self.env):
            self.bind([self.env], name, unknown, unknown.line)
        for cls in self.class_ns:
            self.class_unknown[cls] = unknown
        for record in self.defaults.values():
            for p in record:
                record[p] = unknown

    def poison_object(self, obj, unknown):
        for ns in [self.env] + list(self.class_ns.values()):
            for name, v in list(ns.items()):
                if _reaches(v, obj):
                    self.bind([ns], name, unknown, unknown.line)
        for record in self.defaults.values():
            for p, v in record.items():
                if _reaches(v, obj):
                    record[p] = unknown

    def poison_root(self, e, scope, unknown, store=False):
        """`e` (x.a[i], a target or a receiver) changed in place."""
        name, attrs = _root(e)
        v = self.peek(name, scope)
        if isinstance(v, V.Dotted) and v.name.split(".")[0] == "sys" and "modules" in attrs:
            self.poison_all(unknown)  # sys.modules[__name__].X = ...
        elif isinstance(v, V.ClassRef):
            if store and isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name):
                self.class_ns[v.node][e.attr] = unknown
            else:
                self.class_unknown[v.node] = unknown
            self.class_changed(v.node, unknown.line)
        elif isinstance(v, V.FunctionRef) and any(a.startswith("__") for a in attrs):
            self.bind(scope, name, unknown, unknown.line)  # f.__defaults__ = ...
        elif isinstance(v, V.Dotted) and name in self.registries:
            # An imported registry changed in place (ACT2FN["gelu"] = ...):
            # no longer the table known by name.
            self.bind(scope, name, unknown, unknown.line)
        else:
            for m in _mutables(v):
                self.poison_object(m, unknown)

    def poison_call(self, c, scope, unknown):
        f = c.func
        head = self.peek(_root(f)[0], scope)
        if isinstance(head, Logger) or self.dotted(f, scope) in ("warnings.warn",) or \
                (self.dotted(f, scope) or "").startswith("logging."):
            return  # logs only
        func = None
        if not any(isinstance(n, ast.Call) for n in ast.walk(f)):  # (no call run twice)
            try:
                func = self.eval(f, scope)
            except _NotKnown:
                pass
        receiver = self.peek(f.value.id, scope) if isinstance(f, ast.Attribute) and \
            isinstance(f.value, ast.Name) else None
        if isinstance(func, (V.FunctionRef, V.ClassRef)):  # the file's code
            self.poison_reached([func.node] + ([receiver.node] if isinstance(
                receiver, V.ClassRef) else []), c.args + c.keywords, unknown, scope)
        elif isinstance(func, _Method):
            if func.name not in _PURE_METHODS:
                for m in _mutables(func.obj):
                    self.poison_object(m, unknown)
        elif func in (_SETATTR, _DELATTR) and c.args:
            attr = c.args[1].value if len(c.args) > 1 and isinstance(
                c.args[1], ast.Constant) and isinstance(c.args[1].value, str) else None
            self.poison_root(ast.Attribute(value=c.args[0], attr=attr) if attr
                             else c.args[0], scope, unknown, store=attr is not None)
        elif isinstance(f, ast.Name) and f.id in _ANY_NAME and head is None:
            self.poison_all(unknown)
        elif isinstance(receiver, V.ClassRef):
            # A method the class gets from a base not of the file.
            self.class_unknown[receiver.node] = unknown
            self.class_changed(receiver.node, unknown.line)
        elif isinstance(f, ast.Attribute) and f.attr not in _PURE_METHODS:
            self.poison_root(f.value, scope, unknown)
        if isinstance(head, Unknown):
            for m in head.aliases:  # f = ITEMS.append; f(3)
                self.poison_object(m, unknown)
        for arg in c.args + [k.value for k in c.keywords]:
            for n in ast.walk(arg):
                if isinstance(n, ast.Name):
                    for m in _mutables(self.peek(n.id, scope)):
                        self.poison_object(m, unknown)
                elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and \
                        isinstance(self.peek(n.value.id, scope), V.ClassRef):
                    self.poison_root(n, scope, unknown)  # Cls.items passed

    def poison_reached(self, nodes, args, unknown, scope=None):
        """A call of the file's code at import: the names its functions (and
        those they name) declare global, the containers they read (in the
        classes they read or get too), and, if they set attributes, those
        classes."""
        todo, seen, classes = list(nodes), set(), []
        globals_, sets_attrs = [], False
        for a in args:
            for n in ast.walk(a):
                v = self.peek(n.id, scope or [self.env]) if isinstance(n, ast.Name) else None
                if isinstance(v, (V.FunctionRef, V.ClassRef)):
                    todo.append(v.node)  # it may call them
        while todo:
            node = todo.pop()
            if node in seen:
                continue
            seen.add(node)
            if isinstance(node, ast.ClassDef):
                classes.append(node)
            for n in ast.walk(node):
                if isinstance(n, ast.Global):
                    globals_ += [(g, n.lineno, getattr(node, "name", "?")) for g in n.names]
                elif isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
                    sets_attrs = True
                elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                    v = self.env.get(n.id)
                    if isinstance(v, (V.FunctionRef, V.ClassRef)):
                        todo.append(v.node)
                    elif n.id in _ANY_NAME and v is None:
                        self.poison_all(unknown)
                    elif n.id in ("setattr", "delattr") and v is None:
                        sets_attrs = True
                    else:
                        for m in _mutables(v):
                            self.poison_object(m, unknown)
        for name, line, fn in globals_:
            self.bind([self.env], name, Unknown(
                unknown.line, unknown.stmt, "%s, which declares `global %s` at line %d"
                % (fn, name, line)), unknown.line)
        for cls in classes:
            for value in list(self.class_ns.get(cls, {}).values()):
                for m in _mutables(value):  # C.items.append(...)
                    self.poison_object(m, unknown)
            if sets_attrs:
                self.class_unknown[cls] = unknown
                self.class_changed(cls, unknown.line)

    # -- expressions -----------------------------------------------------------
    def eval(self, e, scope):
        method = getattr(self, "eval_" + type(e).__name__, None)
        if method is None:
            raise _NotKnown(_text(e))
        return method(e, scope)

    def call(self, fn, e):
        try:
            return fn()
        except _NotKnown:
            raise
        except Exception as err:
            raise _NotKnown("%s (it raises %s)" % (_text(e), type(err).__name__)) from None

    def known(self, v):
        if isinstance(v, V.Dotted):
            if v.name == "typing.TYPE_CHECKING":
                return False
            if v.name.startswith("math.") and isinstance(getattr(math, v.name[5:], None),
                                                          float):
                return getattr(math, v.name[5:])
        return v

    def dotted(self, e, scope):
        name, attrs = _root(e)
        v = self.peek(name, scope) if isinstance(e, (ast.Name, ast.Attribute)) else None
        return ".".join([v.name] + attrs[::-1]) if isinstance(v, V.Dotted) else None

    def truth(self, v, e):
        if isinstance(v, V.Dotted):
            raise _NotKnown("the truth of %s" % _text(e))
        return bool(v)

    def items(self, v, e):
        if _opaque(v) and not isinstance(v, (list, tuple)) or isinstance(
                v, (V.FunctionRef, V.ClassRef)):
            raise _NotKnown("the values of %s" % _text(e))
        items = self.call(lambda: list(itertools.islice(iter(v), LIMIT + 1)), e)
        if len(items) > LIMIT:
            raise _NotKnown("%s (more than %d values)" % (_text(e), LIMIT))
        return items

    def binop(self, op, a, b, e):
        if _opaque(a) or _opaque(b) or (
                # (no huge number or sequence built at import: 2 ** 10 ** 9)
                op in (operator.pow, operator.ipow, operator.lshift, operator.ilshift)
                and isinstance(b, int) and abs(b) > 4096) or (
                op in (operator.mul, operator.imul) and any(
                    isinstance(x, int) and abs(x) > LIMIT for x in (a, b)) and any(
                    isinstance(x, (str, bytes, list, tuple)) for x in (a, b))):
            raise _NotKnown(_text(e))
        return self.call(lambda: op(a, b), e)

    def index(self, e, scope):
        if isinstance(e, ast.Slice):
            return slice(*(self.eval(x, scope) if x is not None else None
                           for x in (e.lower, e.upper, e.step)))
        key = self.eval(e, scope)
        if _opaque(key):
            raise _NotKnown("the index %s" % _text(e))
        return key

    def eval_Constant(self, e, scope):
        return e.value

    def eval_Name(self, e, scope):
        v = self.lookup(e.id, scope)
        if isinstance(v, Unknown):
            raise _NotKnown("'%s', not known since line %d" % (e.id, v.line), v)
        if isinstance(v, ModuleExpr):
            raise _NotKnown("'%s', evaluated only where it is read" % e.id)
        return self.known(v)

    def eval_Attribute(self, e, scope):
        return self.attribute(self.eval(e.value, scope), e.attr, e)

    def attribute(self, base, name, e):
        if isinstance(base, V.Dotted):
            return self.known(V.Dotted(base.name + "." + name))
        if isinstance(base, V.ClassRef):
            v = self.class_attr(base.node, name)
            if isinstance(v, Unknown):
                raise _NotKnown("%s, not known since line %d" % (_text(e), v.line), v)
            if v is None or isinstance(v, ModuleExpr):
                raise _NotKnown(_text(e))
            return v
        if isinstance(base, _PLAIN + (list, tuple, dict, set, frozenset)) and \
                not name.startswith("_") and callable(getattr(base, name, None)):
            return _Method(base, name)
        raise _NotKnown(_text(e))

    def eval_Call(self, e, scope):
        func = self.eval(e.func, scope)
        args = self.elements(e.args, scope)
        kwargs = {}
        for kw in e.keywords:
            v = self.eval(kw.value, scope)
            if kw.arg is None:
                if not isinstance(v, dict):
                    raise _NotKnown(_text(e))
                kwargs.update(v)
            else:
                kwargs[kw.arg] = v
        values = args + list(kwargs.values())
        if isinstance(func, _Builtin) and (not func.plain or all(_plain(v) for v in values)):
            return self.call(lambda: func.fn(*args, **kwargs), e)
        if isinstance(func, _Method) and (all(not _opaque(v) for v in values) or (
                isinstance(func.obj, list) and func.name in ("append", "extend", "insert"))) \
                and (not isinstance(func.obj, (str, bytes)) or all(_plain(v) for v in values)):
            result = self.call(lambda: getattr(func.obj, func.name)(*args, **kwargs), e)
            if isinstance(func.obj, _CONTAINERS) and func.name not in _PURE_METHODS:
                self.changed(func.obj, e.lineno)
            return result
        if isinstance(func, V.Dotted) and func.name.startswith("math.") and \
                callable(getattr(math, func.name[5:], None)) and all(_plain(v) for v in values):
            return self.call(lambda: getattr(math, func.name[5:])(*args, **kwargs), e)
        if func in (_SETATTR, _DELATTR) and args and isinstance(args[0], V.ClassRef) and \
                len(args) == (3 if func is _SETATTR else 2) and isinstance(args[1], str) \
                and not kwargs:
            ns = self.class_ns[args[0].node]
            if func is _SETATTR:
                self.storable(args[2], e)
                ns[args[1]] = args[2]
            else:
                self.call(lambda: ns.pop(args[1]), e)
            self.class_changed(args[0].node, e.lineno)
            return None
        raise _NotKnown("the call %s" % _text(e))

    def elements(self, elts, scope):
        out = []
        for x in elts:
            if isinstance(x, ast.Starred):
                out.extend(self.items(self.eval(x.value, scope), x.value))
            else:
                out.append(self.eval(x, scope))
        return out

    def eval_Tuple(self, e, scope):
        return tuple(self.elements(e.elts, scope))

    def eval_List(self, e, scope):
        return self.elements(e.elts, scope)

    def eval_Set(self, e, scope):
        items = self.elements(e.elts, scope)
        if _opaque(items):
            raise _NotKnown(_text(e))
        return self.call(lambda: set(items), e)

    def eval_Dict(self, e, scope):
        out = {}
        for k, v in zip(e.keys, e.values):
            value = self.eval(v, scope)
            if k is None:
                if not isinstance(value, dict):
                    raise _NotKnown(_text(v))
                out.update(value)
            else:
                key = self.eval(k, scope)
                if _opaque(key):
                    raise _NotKnown(_text(k))
                self.call(lambda: out.__setitem__(key, value), k)
        return out

    def eval_BinOp(self, e, scope):
        if type(e.op) not in _BINOPS:
            raise _NotKnown(_text(e))
        return self.binop(_BINOPS[type(e.op)], self.eval(e.left, scope),
                          self.eval(e.right, scope), e)

    def eval_UnaryOp(self, e, scope):
        v = self.eval(e.operand, scope)
        if isinstance(e.op, ast.Not):
            return not self.truth(v, e.operand)
        if _opaque(v):
            raise _NotKnown(_text(e))
        return self.call(lambda: _UNOPS[type(e.op)](v), e)

    def eval_BoolOp(self, e, scope):
        for x in e.values:
            v = self.eval(x, scope)
            if self.truth(v, x) == isinstance(e.op, ast.Or):
                return v
        return v

    def eval_Compare(self, e, scope):
        left = self.eval(e.left, scope)
        for op, x in zip(e.ops, e.comparators):
            right = self.eval(x, scope)
            if not self.truth(self.binop(_CMPS[type(op)], left, right, e), e):
                return False
            left = right
        return True

    def eval_IfExp(self, e, scope):
        return self.eval(e.body if self.truth(self.eval(e.test, scope), e.test) else e.orelse,
                         scope)

    def eval_Subscript(self, e, scope):
        obj, key = self.eval(e.value, scope), self.index(e.slice, scope)
        if not isinstance(obj, (list, tuple, dict, str, bytes, range)):
            raise _NotKnown(_text(e))
        return self.call(lambda: obj[key], e)

    def eval_JoinedStr(self, e, scope):
        out = []
        for v in e.values:
            if isinstance(v, ast.FormattedValue):
                x = self.eval(v.value, scope)
                if not _plain(x):
                    raise _NotKnown(_text(v.value))
                x = {-1: x, 115: str, 114: repr, 97: ascii}[v.conversion](x) \
                    if v.conversion != -1 else x
                spec = self.eval(v.format_spec, scope) if v.format_spec is not None else ""
                out.append(self.call(lambda: format(x, spec), v))
            else:
                out.append(v.value)
        return "".join(out)

    def comprehension(self, e, scope, element):
        out = []
        # Python runs a comprehension as a function: only its first iterable
        # is evaluated where it stands; the rest sees no class body's names
        # (`ks = [SCALE for _ in r]` in a class reads the module's SCALE).
        classes = {id(ns) for ns in self.class_ns.values()}
        inner_scope = [ns for ns in scope if id(ns) not in classes]

        def generate(i, local):
            if i == len(e.generators):
                out.append(element([local] + inner_scope))
                return
            g = e.generators[i]
            if g.is_async:
                raise _NotKnown(_text(e))
            for item in self.items(self.eval(g.iter, [local] + inner_scope if i else scope),
                                   g.iter):
                inner = dict(local)
                self.assign(g.target, item, [inner] + inner_scope, g.target)
                if all(self.truth(self.eval(c, [inner] + inner_scope), c) for c in g.ifs):
                    generate(i + 1, inner)
                if len(out) > LIMIT:
                    raise _NotKnown("%s (more than %d values)" % (_text(e), LIMIT))
        generate(0, {})
        return out

    def eval_ListComp(self, e, scope):
        return self.comprehension(e, scope, lambda s: self.eval(e.elt, s))

    def eval_GeneratorExp(self, e, scope):
        return iter(self.eval_ListComp(e, scope))

    def eval_SetComp(self, e, scope):
        items = self.eval_ListComp(e, scope)
        if _opaque(items):
            raise _NotKnown(_text(e))
        return self.call(lambda: set(items), e)

    def eval_DictComp(self, e, scope):
        pairs = self.comprehension(e, scope, lambda s: (self.eval(e.key, s),
                                                        self.eval(e.value, s)))
        if _opaque([k for k, _ in pairs]):
            raise _NotKnown(_text(e))
        return self.call(lambda: dict(pairs), e)
