"""The interpreter: runs `__init__` on the config and translates `forward`.

Python-level values are computed as Python would (config arithmetic, shape
tuples, loops over layers are unrolled); tensors become tx ops through the
Ops mixin; module attributes tested with `is None` / `is not None` /
truthiness / `==` become tx.layer_ref + tx.guard, and branches on them
scf.if: they are never folded here."""

import ast
import math
import operator

from .errors import FrontendError
from .ops import Ops
from .source import ModuleExpr, _plain
from . import body_check
from . import module_eval
from . import rotary_check
from . import sinusoid
from . import table
from . import values as V

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv,
           ast.Mod: operator.mod, ast.Pow: operator.pow, ast.BitXor: operator.xor,
           ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift}
# In-place operators of Python's mutable containers (list +=, *=; dict |=;
# set |=, &=, -=, ^=): the object itself changes.
_INPLACE_SEQUENCE_OPS = (ast.Add, ast.Mult, ast.BitOr, ast.BitAnd, ast.Sub, ast.BitXor)
_TENSOR_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
_CMPOPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
           ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
           ast.Is: operator.is_, ast.IsNot: operator.is_not}

# Table handlers that replace a file's own function of that name: its body
# is checked against what the handler emitted (body_check); the rotary
# helpers are checked before (rotary_layout).
BODY_CHECKS = {table.eager_attention: body_check.eager_attention,
               table.repeat_kv: body_check.repeat_kv}

# Values that stand for a tensor at import: `.shape` reads their sizes,
# `.dtype`/`.device` are names, another attribute read is tensor_attribute's
# and a method call is a BoundMethod.
TENSOR_LIKE = (V.Tensor, V.AttentionChain, V.RepeatedKV, V.NormChain, V.CausalMask,
               V.LinearWeight, V.Positions, V.SinusoidTable, V.SinusoidRows, V.BoolMask)


class _Return(Exception):
    def __init__(self, value, node=None):
        self.value = value
        self.node = node


def _is_layer(value):
    return isinstance(value, (V.Linear, V.NoneLayer))


class Translator(Ops):
    def __init__(self, source, config, emitter, layer_idx=0, flags=()):
        Ops.__init__(self, emitter)
        self.src = source
        self.config = config
        self.layer_idx = layer_idx
        self.flags = set(flags)          # module attributes imported as i1 arguments
        self.flag_args = {}
        # Rotary module attribute name -> its (cos, sin) arguments; None:
        # the forward's position_embeddings.
        self.rope_tables = {}
        self.specs = []                  # declared module attributes, in order
        self.depth = 0
        self.last_return = None
        self.in_init = False

    # == statements ===========================================================
    def run_block(self, stmts, env):
        for stmt in stmts:
            self.run_stmt(stmt, env)

    current = None  # the statement being translated (for internal errors)

    def run_stmt(self, s, env):
        Translator.current = s
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant):
                return  # docstring
            if self.in_init and self._is_super_init(s.value):
                inst = env.get("self")
                if isinstance(inst, V.Instance) and self.run_base_init(
                        inst, self.super_class(s.value.func.value, env), s.value, env):
                    return
                if isinstance(inst, V.Instance) and inst.table_base is not None and \
                        inst.base_spec is None:
                    self.init_table_base(inst, s.value, env)
                return
            if self.in_init and self._is_base_init(s.value, env):
                # Base.__init__(self, ...): the base class of the file's.
                inst = env.get("self")
                base = self.src.classes[s.value.func.value.id]
                args, kwargs = self.call_arguments(s.value, env)
                self.run_init_of(inst, base, args[1:], kwargs, s.value)
                return
            self.eval(s.value, env)
        elif isinstance(s, ast.Assign):
            hint = s.targets[0].id if isinstance(s.targets[0], ast.Name) else (
                s.targets[0].attr if isinstance(s.targets[0], ast.Attribute) else None)
            value = self.eval(s.value, env, hint=hint)
            for target in s.targets:
                self.assign(target, value, env, s)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.assign(s.target, self.eval(s.value, env), env, s)
        elif isinstance(s, ast.AugAssign):
            self.aug_assign(s, env)
        elif isinstance(s, ast.If):
            self.run_if(s, env)
        elif isinstance(s, ast.For):
            self.run_for(s, env)
        elif isinstance(s, ast.Return):
            raise _Return(self.eval(s.value, env) if s.value is not None else None, s)
        elif isinstance(s, ast.Pass):
            pass
        elif isinstance(s, ast.FunctionDef):
            # A function defined in a method (DistilBERT's and T5's shape /
            # unshape helpers): a closure over this scope, translated where
            # it is called.
            if s.decorator_list:
                raise FrontendError("a decorated function defined inside a function is not "
                                    "supported", s)
            env[s.name] = V.Closure(s, env)
        elif isinstance(s, ast.Assert):
            test = self.eval(s.test, env)
            if self._python(test, s.test) and not test:
                err = FrontendError("assertion fails at import", s)
                err.raised = True
                raise err
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            pass
        elif isinstance(s, ast.With):
            for item in s.items:
                self.context_manager(item, env)
            self.run_block(s.body, env)
        elif isinstance(s, ast.Raise):
            # Reached at import (a size check HF's __init__ or forward
            # makes that fails on this config): what Python would raise.
            exc = s.exc.func if isinstance(s.exc, ast.Call) else s.exc
            err = FrontendError("the module raises %s here at import"
                                % (self.src.dotted(exc) or "an exception"), s)
            err.raised = True  # PyTorch fails here too: never deferred
            raise err
        else:
            raise FrontendError("unsupported statement '%s'" % type(s).__name__, s)

    def context_manager(self, item, env):
        """`with torch.no_grad():`, `with torch.autocast(..., enabled=False):`
        (Nemotron's LayerNorm1P): the body runs as it is (inference, no
        autocast: what the import computes). An autocast that is enabled
        would change the dtypes of the body, any other context manager
        anything: an error."""
        e = item.context_expr
        name = self.src.dotted(e.func) if isinstance(e, ast.Call) else None
        if item.optional_vars is not None or name not in table.CONTEXT_MANAGERS:
            raise FrontendError("'with %s' is not supported (only %s)"
                                % (name or "this", ", ".join(
                                    "%s(...)" % n for n in sorted(table.CONTEXT_MANAGERS))),
                                item.context_expr)
        kwargs = {}
        for kw in e.keywords:
            if kw.arg is None:
                raise FrontendError("** in a context manager's arguments is not supported",
                                    kw)
            kwargs[kw.arg] = self.eval(kw.value, env)
        table.CONTEXT_MANAGERS[name](self, e, self.elements(e.args, env), kwargs)

    def table_base(self, cls):
        """The torch module class of table.SUBCLASSES a class of the file
        derives from (directly, or through classes of the file without an
        __init__ of their own, whose super().__init__ would not reach it
        here), or None."""
        for c in self.src.mro(cls):
            for b in c.bases:
                if self.src.dotted(b) in table.SUBCLASSES:
                    return self.src.dotted(b)
        return None

    def init_table_base(self, inst, call, env):
        """super().__init__(...) of a class deriving from a torch module of
        table.SUBCLASSES: the module, made as its factory makes it, and the
        attributes PyTorch's class sets (weight, bias, ...)."""
        args, kwargs = self.call_arguments(call, env)
        self.make_table_base(inst, args, kwargs, call)

    def call_arguments(self, call, env):
        """The positional and keyword arguments of a call, evaluated."""
        args = self.elements(call.args, env)
        kwargs = {}
        for kw in call.keywords:
            if kw.arg is None:
                value = self.eval(kw.value, env)
                if not isinstance(value, dict):
                    raise FrontendError("** of %s is not supported" % self.describe(value),
                                        kw)
                kwargs.update(value)
            else:
                kwargs[kw.arg] = self.eval(kw.value, env)
        return args, kwargs

    def super_class(self, call, env):
        """The class whose bases `super()` / `super(Cls, self)` looks in: the
        class of the file defining the __init__ being run, or Cls."""
        if call.args:
            if len(call.args) != 2 or not isinstance(call.args[0], ast.Name) or \
                    call.args[0].id not in self.src.classes:
                raise FrontendError("super(...) with other arguments than a class of the "
                                    "file and self is not supported", call)
            return self.src.classes[call.args[0].id]
        return self.init_owner

    def run_base_init(self, inst, cls, call, env):
        """super().__init__(...) in the __init__ of `cls`: runs the __init__
        of the next class after `cls` in the instance's method resolution
        order that defines one (PyTorch runs it: what it sets is what forward
        reads; with several bases of the file that is not always a base of
        `cls`), and True; False when none does (nn.Module's, or a torch
        module's of table.SUBCLASSES: the caller's)."""
        if cls is None:
            return False
        owner, fn = self.src.next_in_mro(inst.cls, cls, "__init__")
        if fn is None:
            return False
        args, kwargs = self.call_arguments(call, env)
        self.run_init_def(inst, owner, fn, args, kwargs, call)
        return True

    def run_init_of(self, inst, owner, args, kwargs, node):
        """Runs the __init__ class `owner` (a class of the file) resolves
        (Base.__init__(self, ...)) on `inst`."""
        fn = self.src.method(owner, "__init__", node)
        owner, _ = self.src.method_owner(owner, "__init__")
        self.run_init_def(inst, owner, fn, args, kwargs, node)

    def run_init_def(self, inst, owner, fn, args, kwargs, node):
        saved, self.init_owner = self.init_owner, owner
        try:
            self.inline(fn, inst, args, kwargs, node)
        finally:
            self.init_owner = saved

    def _is_base_init(self, e, env):
        """Base.__init__(self, ...) with Base a class of the file."""
        return (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)
                and e.func.attr == "__init__" and isinstance(e.func.value, ast.Name)
                and e.func.value.id in self.src.classes and e.args
                and isinstance(e.args[0], ast.Name) and e.args[0].id == "self"
                and isinstance(env.get("self"), V.Instance))

    def make_table_base(self, inst, args, kwargs, node):
        spec = table.MODULES[inst.table_base](self, node, inst.path, args, kwargs)
        inst.base_spec = spec
        if self.src.method(inst.cls, "forward", node, required=False) is None:
            return  # the torch module itself (instantiate returns spec)
        for name, value in table.SUBCLASSES[inst.table_base](self, spec, node).items():
            inst.attrs[name] = value
            if isinstance(value, V.Spec):
                self.specs.append(value)
            elif isinstance(value, V.LinearWeight):
                self.specs.append(value.layer)

    def _is_super_init(self, e):
        return (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)
                and isinstance(e.func.value, ast.Call)
                and isinstance(e.func.value.func, ast.Name)
                and e.func.value.func.id == "super")

    def assign(self, target, value, env, stmt):
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            stars = [i for i, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if len(stars) > 1:
                raise FrontendError("multiple starred expressions in assignment", target)
            if not stars:
                items = self.unpack(value, len(target.elts), stmt)
                for t, v in zip(target.elts, items):
                    self.assign(t, v, env, stmt)
                return
            # a, *rest, z = xs: rest is a list of what the others leave.
            if not isinstance(value, (tuple, list)):
                raise FrontendError("cannot unpack %s" % self.describe(value), stmt)
            parts = module_eval.starred_parts(value, len(target.elts), stars[0])
            if parts is None:
                raise FrontendError("not enough values to unpack (expected at least %d, "
                                    "got %d)" % (len(target.elts) - 1, len(value)), stmt)
            for t, v in zip(target.elts, parts):
                self.assign(t.value if isinstance(t, ast.Starred) else t, v, env, stmt)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, env)
            if isinstance(obj, V.Config):
                # config.x = v (Falcon's, Moonshine's __init__): what later
                # reads of the shared config see, as in Python.
                return self.config_set(obj, {target.attr: value}, target)
            if not isinstance(obj, V.Instance):
                raise FrontendError("can only assign attributes of modules and the config",
                                    target)
            prop = self.src.property_defs(obj.cls, target.attr, target)
            if prop is not None and not prop.cached:
                # self.s = v of a property runs its setter (Python's
                # AttributeError without one).
                if prop.setter is None:
                    raise FrontendError("property '%s' of %s has no setter: Python cannot "
                                        "assign it" % (target.attr, obj.cls.name), target)
                self.inline(prop.setter, obj, [value], {}, target)
                return
            if self.in_init:
                value = self.declare(obj, target.attr, value, stmt, env)
            elif isinstance(value, V.Tensor) or _is_layer(obj.attrs.get(target.attr)):
                raise FrontendError("assigning a module attribute in forward is not "
                                    "supported", target)
            obj.attrs[target.attr] = value
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value, env)
            key = self.eval(target.slice, env)
            if isinstance(obj, V.Container):
                self.container_set(obj, key, value, target)
            elif isinstance(obj, V.Tensor):
                self.index_assign(obj, key, value, target)
            elif isinstance(obj, (dict, list)):
                obj[key] = value
            else:
                raise FrontendError("unsupported subscript assignment (to %s)"
                                    % self.describe(obj), target)
        elif isinstance(target, ast.Starred):
            raise FrontendError("starred assignment is not supported", target)
        else:
            raise FrontendError("unsupported assignment target", target)

    def unpack(self, value, n, node):
        if isinstance(value, V.ContainerRead):
            return self.container_get(value, n)
        if isinstance(value, (tuple, list)):
            if len(value) != n:
                raise FrontendError("cannot unpack %d values into %d names"
                                    % (len(value), n), node)
            return list(value)
        raise FrontendError("cannot unpack %s" % self.describe(value), node)

    def aug_assign(self, s, env):
        """x op= v as Python runs it: the target's object and index are
        evaluated once (d[self.nxt()] += 1 calls nxt once), the item or
        attribute is read, v is evaluated, and the result is stored into the
        same object and index."""
        target, temps = self.evaluated_once(s.target, env)
        try:
            self.aug_assign_to(s, target, env)
        finally:
            for name in temps:
                env.pop(name, None)

    def evaluated_once(self, target, env):
        """The target with the parts that evaluating it twice could change
        (any expression but a name or a constant) replaced by names bound to
        their values."""
        if not isinstance(target, (ast.Subscript, ast.Attribute)):
            return target, []
        temps = []

        def bound(node):
            if isinstance(node, (ast.Name, ast.Constant)):
                return node
            name = "\0aug%d" % len(temps)
            env[name] = self.eval(node, env)
            temps.append(name)
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)

        obj = bound(target.value)
        if isinstance(target, ast.Attribute):
            new = ast.Attribute(value=obj, attr=target.attr, ctx=target.ctx)
        else:
            new = ast.Subscript(value=obj, slice=bound(target.slice), ctx=target.ctx)
        return ast.copy_location(new, target), temps

    def aug_assign_to(self, s, target, env):
        op = type(s.op)
        current = self.eval(target, env)
        value = self.eval(s.value, env)
        if isinstance(current, V.AttentionChain) and op in _TENSOR_BINOPS:
            # scores /= math.sqrt(d) (Falcon), scores += mask: the chain
            # object itself changes (every name bound to it sees it, as in
            # PyTorch); other chains of the same scores become stale.
            changed = self.chain_binop(_TENSOR_BINOPS[op], current, value, s)
            current.origin["version"] += 1
            current.origin["line"] = s.lineno
            changed.version = current.origin["version"]
            current.__dict__.update(changed.__dict__)
            return
        if isinstance(current, (V.AttentionChain, V.RepeatedKV)):
            raise FrontendError("in-place operator on %s: not supported (write "
                                "'x = x %s ...')" % (self.describe(current),
                                                     "+" if op is ast.Add else "*"), s)
        if isinstance(current, V.Tensor):
            if op not in _TENSOR_BINOPS:
                raise FrontendError("unsupported in-place operator on a tensor", s)
            # `x += y` writes x's buffer, as in PyTorch.
            self.binary_into(_TENSOR_BINOPS[op], current, value, current, s)
            return
        if isinstance(current, (list, dict, set)) and op in _INPLACE_SEQUENCE_OPS:
            # Python's list/dict/set in-place operators change the object
            # (a second name bound to it sees the change): l += [...]
            # extends it, it is not rebound to a new list.
            result = self.binop(op, current, list(value) if isinstance(current, list) and
                                isinstance(value, tuple) and op is ast.Add else value, s)
            if isinstance(current, list):
                current[:] = result
            else:
                current.clear()
                current.update(result)
            return
        self.assign(target, self.binop(op, current, value, s), env, s)

    def run_for(self, s, env):
        if s.orelse:
            raise FrontendError("for/else is not supported", s)
        iterable = self.eval(s.iter, env)
        if isinstance(iterable, V.ModuleList):
            iterable = iterable.items
        if not isinstance(iterable, (list, tuple, range, dict)):
            raise FrontendError("can only loop over layers, ranges and Python "
                                "sequences (unrolled at import), not %s"
                                % self.describe(iterable), s.iter)
        for item in list(iterable):
            self.assign(s.target, item, env, s)
            self.run_block(s.body, env)

    def run_if(self, s, env):
        cond = self.test(s.test, env)
        if not isinstance(cond, V.Guard):
            self.run_block(s.body if cond else s.orelse, env)
            return

        def branch(stmts):
            def build(benv):
                try:
                    self.run_block(stmts, benv)
                except _Return:
                    raise FrontendError("return inside a branch on a module attribute "
                                        "guard is not supported", stmts[0]) from None
                return benv
            return build
        self.guarded(cond, env, branch(s.body), branch(s.orelse), s)

    def guarded(self, cond, env, build_then, build_else, node):
        """scf.if on `cond`: each build gets a copy of env and returns the env
        (or, for expressions, a 1-entry dict) it ends with; names that differ
        become results."""
        blocks, envs = [], []
        for build in (build_then, build_else):
            block = self.em_push()
            try:
                envs.append(build(dict(env)))
            finally:
                self.em_pop()
            blocks.append(block)
        names = [n for n in list(envs[0]) + [k for k in envs[1] if k not in envs[0]]
                 if envs[0].get(n, _MISSING) is not env.get(n, _MISSING)
                 or envs[1].get(n, _MISSING) is not env.get(n, _MISSING)]
        results = []
        for n in names:
            a, b = envs[0].get(n, _MISSING), envs[1].get(n, _MISSING)
            if a is _MISSING or b is _MISSING:
                env[n] = V.Unavailable("'%s' is set in only one branch of the guard at "
                                       "line %d" % (n, node.lineno))
                continue
            if isinstance(a, V.Tensor) or isinstance(b, V.Tensor):
                merged = self.merge(a, b, n, node)
                results.append((merged, a, b))
                env[n] = merged
            elif isinstance(a, V.Guard) or isinstance(b, V.Guard):
                raise FrontendError("'%s' is a guard value differing between branches"
                                    % n, node)
            elif a is b or (type(a) == type(b) and a == b):
                env[n] = a
            else:
                env[n] = V.Unavailable("'%s' differs between the branches of the guard at "
                                       "line %d" % (n, node.lineno))
        blocks[0].yields = [a.value for _, a, _ in results]
        blocks[1].yields = [b.value for _, _, b in results]
        self.em_if([m.value for m, _, _ in results], cond.value, blocks, node)
        return env

    # == expressions ==========================================================
    def test(self, e, env):
        """A condition: a Python bool, or a Guard for module-attribute tests."""
        return self.truth(self.eval(e, env), e)

    def truth(self, value, node):
        """Python's bool(value) where the import knows it (a Guard for a
        test of a module attribute that is a layer or None); a located error
        for what it does not know, never a guess: every object Python would
        ask __bool__/__len__ of, whose answer is not known here."""
        if isinstance(value, V.Guard):
            return value
        if _is_layer(value):
            return self.guard(value, "truthy", node)
        if isinstance(value, V.Unavailable):
            raise FrontendError(value.why, node)
        if value is V.TOKENS:
            self._python(value, node)  # an error: not known at import
        if value is None or isinstance(value, (bool, int, float, str, bytes, tuple, list,
                                               dict, set, frozenset, range, slice)):
            return bool(value)
        if isinstance(value, V.ModuleList):
            return bool(value.items)  # nn.ModuleList's __len__
        if isinstance(value, V.Instance):
            for name in ("__bool__", "__len__"):
                if self.src.method(value.cls, name, node, required=False) is not None:
                    raise FrontendError("the truth value of module '%s' is its %s(): not "
                                        "supported" % (value.cls.name, name), node)
            return True  # an nn.Module is true
        if isinstance(value, (V.Norm, V.Activation, V.SoftmaxModule, V.Identity, V.Config,
                              V.FunctionRef, V.ClassRef, V.BoundMethod, V.FInfo)):
            return True  # modules, functions, classes, the config: objects
        if isinstance(value, V.Dotted) and table.imported_flag(value.name) is not None:
            return table.imported_flag(value.name)
        if isinstance(value, TENSOR_LIKE) or isinstance(value, (V.Param, V.InitTensor)):
            raise FrontendError("the truth value of a tensor depends on its data: not "
                                "supported", node)
        raise FrontendError("the truth value of %s is not known at import"
                            % self.describe(value), node)

    def eval(self, e, env, hint=None):
        method = getattr(self, "eval_" + type(e).__name__, None)
        if method is None:
            raise FrontendError("unsupported expression '%s'" % type(e).__name__, e)
        saved, self.hint = self.hint, hint or self.hint
        try:
            value = method(e, env)
        finally:
            self.hint = saved
        return value

    def eval_Constant(self, e, env):
        return e.value

    def eval_Name(self, e, env):
        if e.id in env:
            value = env[e.id]
        else:
            value = self.src.global_value(e.id, e)
            if isinstance(value, ModuleExpr):
                # A module-level dict/list/tuple of names: evaluated here.
                value = self.eval(value.node, {})
        if isinstance(value, V.Unavailable) and not (self.in_init and e.id in env):
            # (In __init__ a local holding what the frontend cannot compute,
            # Qwen's `logn_tensor`, may be stored: an error where forward
            # reads it.)
            raise FrontendError(value.why, e)
        if isinstance(value, V.AttentionChain) and value.stale():
            raise FrontendError("'%s' is %s as it was before they were changed in place "
                                "at line %d: not supported (PyTorch may or may not see "
                                "that change through it)"
                                % (e.id, value.what(), value.origin["line"]), e)
        return value

    def eval_Tuple(self, e, env):
        return tuple(self.elements(e.elts, env))

    def eval_List(self, e, env):
        return list(self.elements(e.elts, env))

    def elements(self, elts, env):
        out = []
        for x in elts:
            if isinstance(x, ast.Starred):
                out.extend(self.unpack_all(self.eval(x.value, env), x))
            else:
                out.append(self.eval(x, env))
        return out

    def unpack_all(self, value, node):
        if isinstance(value, V.ModuleList):
            return value.items
        if isinstance(value, (tuple, list, range)):
            return list(value)
        raise FrontendError("cannot unpack %s" % self.describe(value), node)

    def eval_Dict(self, e, env):
        out = {}
        for k, v in zip(e.keys, e.values):
            if k is None:
                out.update(self.eval(v, env))
            else:
                out[self.eval(k, env)] = self.eval(v, env)
        return out

    def eval_JoinedStr(self, e, env):
        """An f-string of Python values, as Python formats it: the
        conversion (!s, !r, !a), then format() with the (itself formatted)
        spec."""
        parts = []
        for v in e.values:
            if not isinstance(v, ast.FormattedValue):
                parts.append(v.value)
                continue
            value = self.eval(v.value, env)
            if not self._python(value, v.value) or isinstance(value, V.Unavailable) or \
                    type(value).__module__ != "builtins" and value is not None:
                raise FrontendError("an f-string of %s is not supported" % self.describe(value),
                                    v.value)
            conversion = {-1: None, ord("s"): str, ord("r"): repr, ord("a"): ascii}
            if v.conversion not in conversion:
                raise FrontendError("unsupported f-string conversion", v)
            if conversion[v.conversion] is not None:
                value = conversion[v.conversion](value)
            spec = self.eval(v.format_spec, env) if v.format_spec is not None else ""
            try:
                parts.append(format(value, spec))
            except (ValueError, TypeError) as err:
                raise FrontendError("f-string: %s" % err, v) from None
        return "".join(parts)

    def eval_ListComp(self, e, env):
        return [value for value in self.comprehension(e, env, lambda local: self.eval(e.elt,
                                                                                  local))]

    eval_GeneratorExp = eval_ListComp

    def eval_SetComp(self, e, env):
        return set(self.comprehension(e, env, lambda local: self.eval(e.elt, local)))

    def eval_DictComp(self, e, env):
        return dict(self.comprehension(
            e, env, lambda local: (self.eval(e.key, local), self.eval(e.value, local))))

    def comprehension(self, e, env, element):
        """The elements of a comprehension, as Python computes them: its
        generators nested left to right, each `if` tested in turn, its
        names local to it (the first iterable is evaluated outside)."""
        if any(g.is_async for g in e.generators):
            raise FrontendError("async comprehensions are not supported", e)

        def run(i, local):
            if i == len(e.generators):
                yield element(local)
                return
            gen = e.generators[i]
            for item in self.unpack_all(self.eval(gen.iter, env if i == 0 else local),
                                        gen.iter):
                inner = dict(local)
                self.assign(gen.target, item, inner, e)
                if all(self.python_test(c, inner) for c in gen.ifs):
                    yield from run(i + 1, inner)

        yield from run(0, dict(env))

    def python_test(self, e, env):
        """A condition that must be a Python truth value (a comprehension's
        `if`): a module-attribute guard there is not supported."""
        value = self.test(e, env)
        if isinstance(value, V.Guard):
            raise FrontendError("a test of a module attribute in a comprehension is not "
                                "supported", e)
        return value

    raw_params = False

    def eval_Attribute(self, e, env):
        name = e.attr
        called = self.callee is e  # x.name(...), else a read of x.name
        if name == "shape" and isinstance(e.value, ast.Attribute) and \
                isinstance(e.value.value, ast.Name):
            # self.weight.shape of a parameter: its shape, no tx.get_param.
            self.raw_params = True
            try:
                base = self.eval(e.value, env)
            finally:
                self.raw_params = False
        else:
            base = self.eval(e.value, env)
        if isinstance(base, V.Unavailable):
            raise FrontendError(base.why, e)
        if isinstance(base, V.Dotted):
            dotted = base.name + "." + name
            if base.name == "math" and isinstance(getattr(math, name, None), float):
                return getattr(math, name)  # math.pi, math.e, math.inf, math.tau
            return V.Dotted(dotted)
        if isinstance(base, V.Config):
            if called and name == "update":
                return V.BoundMethod(base, name)  # config.update({...})
            return self.config_get(base, name, e)
        if isinstance(base, V.ModuleList) and called and name in ("append", "extend"):
            return V.BoundMethod(base, name)
        if isinstance(base, V.Instance):
            return self.instance_attribute(base, name, e)
        if isinstance(base, V.ClassRef):
            # Cls.k, cls.k of a classmethod: a class attribute (through the
            # MRO) or a method of the class.
            cls = base.node
            if self.src.method(cls, name, e, required=False) is not None:
                if self.src.property_defs(cls, name, e) is not None:
                    raise FrontendError("a property read from the class is not supported", e)
                return V.BoundMethod(base, name)
            found, value = self.src.class_constant(cls, name, e)
            if found:
                return value
            raise FrontendError("class '%s' has no attribute '%s'" % (cls.name, name), e)
        if isinstance(base, V.Linear) and name in ("in_features", "out_features"):
            return getattr(base, name)
        if isinstance(base, V.Norm) and name in ("eps", "variance_epsilon"):
            return base.eps
        if isinstance(base, V.LinearWeight) and name == "T":
            return V.LinearWeight(base.layer, not base.transposed)
        if isinstance(base, TENSOR_LIKE):
            if name == "shape":
                return self.tensor_sizes(base)
            if name in ("dtype", "device"):
                return "tensor.%s" % name
            if not called:
                return self.tensor_attribute(base, name, e)
            return V.BoundMethod(base, name)
        if isinstance(base, (int, float)) and not isinstance(base, bool) and \
                name in table.NUMBER_METHODS:
            # .to(dtype)/.item()/.float() of a 0-d tensor made in __init__
            # from a number (table.INIT_SCALARS): the number.
            return V.BoundMethod(base, name)
        if isinstance(base, V.FInfo) and name in ("min", "max", "eps", "tiny"):
            return getattr(base, name)
        if isinstance(base, V.Param):
            if name == "shape":
                return base.shape
            raise FrontendError("unsupported attribute '%s' of a parameter" % name, e)
        if base == "tensor.device" and name == "type":
            # x.device.type (HF's autocast guards: `!= "mps"`): a name of
            # the device, equal to no literal.
            return "tensor.device.type"
        if isinstance(base, (V.Container, dict, str, tuple, list)):
            if not called:
                # Python's AttributeError (a dict of config.json is not an
                # object: config.block_configs[0].skip).
                what = "a %s" % type(base).__name__ if isinstance(base, (dict, list, tuple)) \
                    else self.describe(base)
                raise FrontendError("%s has no attribute '%s' (only methods of it are "
                                    "supported)" % (what, name), e)
            return V.BoundMethod(base, name)
        raise FrontendError("unsupported attribute '%s' of %s" % (name, self.describe(base)), e)

    _MISSING = object()

    def instance_attribute(self, base, name, e, default=_MISSING):
        """`base.name` of a module of the file, as Python finds it: the
        instance's attributes, then its class's (a @property's value, a
        method, a class constant), through the method resolution order;
        `default` (getattr's third argument) when it has none, else an
        error."""
        if name in self.flags and not self.in_init:
            return self.flag_arg(base, name, e)
        prop = self.src.property_defs(base.cls, name, e)
        if prop is not None and (not prop.cached or name not in base.attrs):
            # A property (a data descriptor: before the instance's
            # attributes; a cached_property after them): its getter's value.
            if prop.getter is None:
                raise FrontendError("property '%s' of %s has no getter" % (name, base.cls.name),
                                    e)
            return self.inline(prop.getter, base, [], {}, e)
        if name not in base.attrs:
            fn = self.src.method(base.cls, name, e, required=False)
            if fn is not None:
                return V.BoundMethod(base, name)  # self.helper(...): inlined
            if name == "register_buffer" and self.in_init:
                return self.register_buffer(base)
            found, value = self.src.class_constant(base.cls, name, e)
            if found:
                return value  # a class attribute (is_causal = True)
            if default is not Translator._MISSING:
                return default
            if base.init_error:
                raise FrontendError(
                    "module '%s' has no attribute '%s': its __init__ could not be "
                    "evaluated past %s" % (base.cls.name, name, base.init_error), e)
            raise FrontendError("module '%s' has no attribute '%s' (set in __init__)"
                                % (base.cls.name, name), e)
        value = base.attrs[name]
        if isinstance(value, V.Unavailable) and not self.in_init:
            raise FrontendError(value.why, e)
        if isinstance(value, V.Param) and not self.in_init and not self.raw_params:
            return self.get_param(value, e)
        return value

    def tensor_sizes(self, t):
        """The sizes of a tensor-like value (TENSOR_LIKE), as `.shape` reads
        them."""
        if isinstance(t, V.CausalMask):
            # HF's size checks (`attention_mask.size() != (bsz, 1, q_len,
            # kv_seq_len)`): a [1, 1, tokens, tokens] mask.
            return V.CausalMask.SIZES
        if isinstance(t, V.RepeatedKV):
            return self.repeated_sizes(t)
        return t.sizes()

    def tensor_attribute(self, t, name, node):
        """`t.name` read, not called, of a tensor (or a mask, a chain): what
        PyTorch's attribute is at inference, or an error; never a method
        object (which is always true and equal to nothing)."""
        if name == "ndim":
            return len(self.tensor_sizes(t))
        if name == "requires_grad":
            return False  # inference: no autograd
        if name in ("is_cuda", "is_cpu", "is_meta", "is_mps", "is_xla"):
            raise FrontendError("'%s' of a tensor depends on the device the model runs on: "
                                "not supported" % name, node)
        raise FrontendError("unsupported attribute '%s' of %s" % (name, self.describe(t)),
                            node)

    def config_set(self, cfg, values, node):
        """config.x = v, config.update({...}): Python values only."""
        def plain(v):
            if isinstance(v, (list, tuple)):
                return all(plain(x) for x in v)
            if isinstance(v, dict):
                return all(isinstance(k, str) and plain(x) for k, x in v.items())
            return v is None or isinstance(v, (bool, int, float, str))
        for name, value in values.items():
            if not isinstance(name, str) or not plain(value):
                raise FrontendError("the config may only be given Python values, got %s "
                                    "for %r" % (self.describe(value), name), node)
            cfg.data[name] = value
        return None

    def config_get(self, cfg, name, node, default=V.Unavailable):
        # As HF's config object reads it (table.config_value: derived keys,
        # aliases, defaults).
        value = table.config_value(cfg.data, name)
        if value is not table._NO_VALUE:
            return value
        if default is not V.Unavailable:
            return default
        raise FrontendError("config has no key '%s' (%s)" % (name, cfg.path), node)

    def eval_Subscript(self, e, env):
        base = self.eval(e.value, env)
        key = self.eval(e.slice, env)
        if isinstance(base, V.Dotted) and base.name.rsplit(".", 1)[-1] == "ACT2FN":
            if key not in table.ACT2FN:
                raise FrontendError("unsupported activation '%s' (known: %s)"
                                    % (key, ", ".join(sorted(table.ACT2FN))), e)
            return V.Activation(table.ACT2FN[key])
        if isinstance(base, V.Dotted) and base.name.endswith("ALL_ATTENTION_FUNCTIONS"):
            # HF's attention registry: every implementation is tx.attention;
            # which mask it applies without one is the implementation's.
            return self.attention_implementation(key, e)
        if isinstance(base, V.Unavailable) and self.in_init:
            return base  # a tensor __init__ computes that the frontend cannot
        if isinstance(base, V.ModuleList):
            if isinstance(key, slice):
                return V.ModuleList(base.items[key], base.sequential, base.names[key])
            return base.items[key]
        if isinstance(base, V.Container):
            return V.ContainerRead(base, key, e)
        if isinstance(base, V.Tensor):
            return self.tensor_index(base, key, e)
        if isinstance(base, V.CausalMask):
            return self.mask_index(key, e)
        if isinstance(base, V.BoolMask):
            return self.mask_slice(base, key, e)
        if isinstance(key, V.Positions) and key.columns is None:
            return self.sinusoid_rows(base, key, e)
        if isinstance(base, V.SinusoidRows):
            raise FrontendError("the rows of a sinusoid table may only be split in their "
                                "two halves (torch.split(x, x.shape[-1] // 2, dim=-1))", e)
        if isinstance(base, (V.AttentionChain, V.RepeatedKV)):
            self.no_chain(base, e)
        if isinstance(base, (tuple, list, dict, str)):
            try:
                return base[key]
            except (IndexError, KeyError, TypeError) as err:
                raise FrontendError("bad subscript: %s" % err, e) from None
        raise FrontendError("cannot subscript %s" % self.describe(base), e)

    def mask_index(self, key, node):
        """attention_mask[:, :, :, :k.shape[-2]] (HF's slice of the causal
        mask to the keys' length): the causal mask still; any other index is
        an error."""
        key = key if isinstance(key, tuple) else (key,)
        full = (None, V.TOKENS)
        if len(key) > 4 or not all(
                isinstance(k, slice) and k.step in (None, 1) and k.start in (None, 0) and
                k.stop in full for k in key):
            raise FrontendError("indexing the attention mask other than up to the keys' "
                                "length ([:, :, :, :key.shape[-2]]) is not supported", node)
        return V.CausalMask()

    def eval_Slice(self, e, env):
        part = lambda x: None if x is None else self.eval(x, env)
        return slice(part(e.lower), part(e.upper), part(e.step))

    def eval_Index(self, e, env):  # Python < 3.9
        return self.eval(e.value, env)

    def eval_BinOp(self, e, env):
        return self.binop(type(e.op), self.eval(e.left, env), self.eval(e.right, env), e)

    def binop(self, op, a, b, node):
        if op is ast.Sub and a is V.TOKENS and b is V.TOKENS:
            # key_length - query_length (GPT-Neo's slice of its mask): the
            # keys are the tokens (no cache at import).
            return 0
        for v in (a, b):
            if isinstance(v, V.Unavailable):
                raise FrontendError(v.why, node)
            if isinstance(v, V.Positions):
                raise FrontendError("arithmetic on %s is not supported" % self.describe(v),
                                    node)
        if op is ast.MatMult:
            return self.matmul(a, b, node)
        if isinstance(a, V.InitTensor) or isinstance(b, V.InitTensor):
            return self.init_tensor_binop(op, a, b, node)
        if isinstance(a, V.AttentionChain) or isinstance(b, V.AttentionChain):
            if op not in _TENSOR_BINOPS:
                self.no_chain(a if isinstance(a, V.AttentionChain) else b, node)
            return self.chain_binop(_TENSOR_BINOPS[op], a, b, node)
        if isinstance(a, V.RepeatedKV) or isinstance(b, V.RepeatedKV):
            self.no_chain(a if isinstance(a, V.RepeatedKV) else b, node)
        if isinstance(a, V.NormChain) or isinstance(b, V.NormChain):
            # A norm written out (x - mean, var + eps, x * rsqrt(...), ...).
            if op is ast.Pow and isinstance(a, V.NormChain) and b == 2:
                return self.norm_chain_method(a, "pow", [2], {}, node)
            if op not in _TENSOR_BINOPS:
                self.no_chain(a if isinstance(a, V.NormChain) else b, node)
            return self.norm_binop(_TENSOR_BINOPS[op], a, b, node)
        if op is ast.Pow and isinstance(a, V.Tensor) and b == 2 and \
                not isinstance(b, bool):
            return self.norm_start(a, "pow", [2], {}, node)  # x ** 2 of a norm
        if op is ast.Pow and isinstance(a, V.Tensor) and b == 3 and \
                not isinstance(b, bool):
            return self.cube(a, node)
        if isinstance(a, V.Tensor) or isinstance(b, V.Tensor):
            if op not in _TENSOR_BINOPS:
                raise FrontendError("unsupported operator on tensors", node)
            return self.binary(_TENSOR_BINOPS[op], a, b, node)
        if op not in _BINOPS or not self._python(a, node) or not self._python(b, node):
            raise FrontendError("unsupported operator", node)
        try:
            return _BINOPS[op](a, b)
        except Exception as err:
            raise FrontendError("cannot compute at import: %s" % err, node) from None

    def init_tensor_binop(self, op, a, b, node):
        """c * torch.ones(n) (DINOv2's and BEiT's layer scale
        nn.Parameter(config.layerscale_value * torch.ones(hidden))): an
        initial value again, whose numbers the checkpoint gives."""
        t = a if isinstance(a, V.InitTensor) else b
        other = b if t is a else a
        number = isinstance(other, (int, float)) and not isinstance(other, bool)
        if op not in (ast.Add, ast.Sub, ast.Mult, ast.Div) or not (
                number or isinstance(other, V.InitTensor) and other.shape == t.shape):
            raise FrontendError("in __init__, only +, -, *, / of a tensor of torch.ones/zeros/"
                                "empty/randn/rand and a number (or one of its shape) is "
                                "supported, got %s" % self.describe(other), node)
        return V.InitTensor(t.shape)

    def _python(self, v, node):
        if v is V.TOKENS:
            raise FrontendError("the number of tokens is not known at import (it is "
                                "dynamic): it cannot be computed with or compared (use -1 for it "
                                "in views)", node)
        return not isinstance(v, (V.Guard, V.Tensor, V.Spec, V.Instance, V.Container,
                                  V.ContainerRead, V.AttentionChain, V.RepeatedKV,
                                  V.CausalMask, V.NormChain, V.Positions,
                                  V.LinearWeight))

    def eval_UnaryOp(self, e, env):
        if isinstance(e.op, ast.Not):
            value = self.eval(e.operand, env)
            if _is_layer(value):
                return self.guard(value, "falsy", e)
            if isinstance(value, V.Guard):
                return self.guard_not(value, e)
            return not self.truth(value, e.operand)
        value = self.eval(e.operand, env)
        self.no_chain(value, e)
        if isinstance(value, V.Tensor):
            if isinstance(e.op, ast.USub):
                return self.unary("neg", value, e)
            raise FrontendError("unsupported unary operator on a tensor", e)
        if not self._python(value, e):
            raise FrontendError("unsupported unary operator on %s" % self.describe(value), e)
        if isinstance(e.op, ast.USub):
            return -value
        if isinstance(e.op, ast.UAdd):
            return +value
        raise FrontendError("unsupported unary operator", e)

    def eval_BoolOp(self, e, env):
        """`a or b` / `a and b`: on Python values as Python does (the value
        that decides, evaluated left to right and no further: `x or d`
        gives x); from the first guard on, arith on i1 (the Python values
        before it did not decide, so they drop out)."""
        is_and = isinstance(e.op, ast.And)
        for i, operand in enumerate(e.values):
            value = self.eval(operand, env)
            if isinstance(value, V.Guard) or _is_layer(value):
                first = value if isinstance(value, V.Guard) else \
                    self.guard(value, "truthy", operand)
                rest = [self.test(v, env) for v in e.values[i + 1:]]
                return self.guard_logic("and" if is_and else "or", [first] + rest, e)
            if self.truth(value, operand) != is_and or i == len(e.values) - 1:
                return value

    def eval_Compare(self, e, env):
        left = self.eval(e.left, env)
        if len(e.ops) > 1:  # a < b < c on Python values
            result = True
            for op, comparator in zip(e.ops, e.comparators):
                right = self.eval(comparator, env)
                for v in (left, right):
                    if not self._python(v, e) or isinstance(v, V.Unavailable):
                        raise FrontendError("chained comparison of %s is not supported"
                                            % self.describe(v), e)
                result = _CMPOPS[type(op)](left, right)
                if not result:
                    return result  # Python evaluates no further operand
                left = right
            return result
        op = type(e.ops[0])
        right = self.eval(e.comparators[0], env)
        if right is None and _is_layer(left) or left is None and _is_layer(right):
            layer = left if right is None else right
            pred = {ast.Is: "is_none", ast.IsNot: "is_not_none", ast.Eq: "eq_none",
                    ast.NotEq: "ne_none"}.get(op)
            if pred is None:
                raise FrontendError("unsupported comparison of a layer with None", e)
            return self.guard(layer, pred, e)
        if op in (ast.Is, ast.IsNot) and (right is None or left is None):
            other = left if right is None else right
            result = other is None
            return result if op is ast.Is else not result
        if "tensor.dtype" in (left, right) or "tensor.device" in (left, right):
            return self.compare_dtype(left, right, op, e)
        for v in (left, right):
            if not self._python(v, e) or isinstance(v, V.Unavailable):
                raise FrontendError("comparison of %s is not supported (only Python values "
                                    "and module attributes against None)"
                                    % self.describe(v), e)
        return _CMPOPS[op](left, right)

    def compare_dtype(self, left, right, op, node):
        """`x.dtype == torch.float32` (or !=, is, is not): the frontend computes
        in the model's dtype (--dtype), so a tensor's dtype is that one (an
        explicit cast is not tracked); other dtype or device comparisons are
        errors, never a silent False."""
        if left == right and op in (ast.Eq, ast.NotEq):
            # Two tensors' devices (or dtypes): one device, one dtype.
            return op is ast.Eq
        if op in (ast.In, ast.NotIn) and left == "tensor.dtype" and \
                isinstance(right, (list, tuple)):
            # Baichuan's `self.weight.dtype in [torch.float16, torch.bfloat16]`.
            found = any(self.compare_dtype(left, x, ast.Eq, node) for x in right)
            return found if op is ast.In else not found
        other = right if left == "tensor.dtype" else left
        if op in (ast.Eq, ast.NotEq, ast.Is, ast.IsNot) and \
                "tensor.dtype" in (left, right) and isinstance(other, V.Dotted):
            name = other.name.rsplit(".", 1)[-1]
            dtype = {"float32": "f32", "float": "f32", "bfloat16": "bf16",
                     "float16": "f16", "half": "f16", "float64": "f64",
                     "double": "f64"}.get(name)
            if dtype is not None and other.name.startswith("torch."):
                same = dtype == self.dtype
                return same if op in (ast.Eq, ast.Is) else not same
        raise FrontendError("comparison of a tensor's dtype or device with %s is not "
                            "supported" % self.describe(other), node)

    def eval_IfExp(self, e, env):
        cond = self.test(e.test, env)
        if not isinstance(cond, V.Guard):
            return self.eval(e.body if cond else e.orelse, env)
        key = "<ifexp>"

        def arm(expr):
            def build(benv):
                benv[key] = self.eval(expr, benv)
                return benv
            return build
        return self.guarded(cond, env, arm(e.body), arm(e.orelse), e).pop(key)

    def eval_Starred(self, e, env):
        raise FrontendError("starred expression here is not supported", e)

    # == calls ================================================================
    callee = None  # the ast node being evaluated as a call's function

    def eval_Call(self, e, env):
        self.callee = e.func
        func = self.eval(e.func, env)
        args = self.elements(e.args, env)
        kwargs = {}
        for kw in e.keywords:
            value = self.eval(kw.value, env)
            if kw.arg is None:
                if not isinstance(value, dict):
                    raise FrontendError("** of %s is not supported" % self.describe(value), kw)
                kwargs.update(value)
            else:
                kwargs[kw.arg] = value
        return self.call(func, args, kwargs, e, env)

    def call(self, func, args, kwargs, node, env):
        if isinstance(func, V.Dotted):
            return self.call_named(func.name, args, kwargs, node)
        if isinstance(func, V.FunctionRef):
            handler = table.lookup_function(func.name)
            a = func.node.args
            params = [p.arg for p in list(getattr(a, "posonlyargs", [])) + list(a.args)
                      + list(a.kwonlyargs)]
            if handler is not None and not all(p in params for p in
                                               getattr(handler, "needs_params", ())):
                # The file's own function does not take what the table's
                # handler reads (GPT-2's eager_attention_forward computes
                # its scale itself): its body is translated instead.
                if kwargs.get("sliding_window") is not None:
                    raise FrontendError("sliding-window attention is not supported", node)
                handler = None
            if getattr(handler, "file_body_first", False):
                # The file's own is_torch_fx_proxy & co. (or a function named
                # as a registry entry, sdpa_attention_forward): its body decides.
                handler = None
            if handler is not None:
                # The file's own signature (its defaults) binds the call; the
                # handler gets every parameter by position and by name.
                bound = self.bind(func.node, args, kwargs, node)
                a = func.node.args
                names = [p.arg for p in list(getattr(a, "posonlyargs", [])) + list(a.args)]
                extra = bound.get(a.kwarg.arg, {}) if a.kwarg is not None else {}
                named = dict(extra)
                named.update({n: bound[n] for n in names})
                if handler is table.eager_attention and "softcap" not in params:
                    # A softcap= the file's function takes only in **kwargs
                    # is not tx.attention's (body_check: its body must not
                    # cap either).
                    named.pop("softcap", None)
                if handler is table.rotary_pair and len(names) > 1 and \
                        getattr(bound.get(names[1]), "role", None) in ("cos", "sin"):
                    # The file's helper of that name rotates one tensor
                    # (Gemma 3n's apply_rotary_pos_emb(x, cos, sin, ...),
                    # GPT-J's (tensor, sin, cos)): its second parameter is
                    # given a rotary table, not a tensor to rotate.
                    handler = table.rotary_single
                if handler in (table.rotary_pair, table.rotary_single):
                    positional = [bound[n] for n in names]
                    operands = table.rotary_operands(handler, positional, named, node)
                    layout = self.rotary_layout(func.node, bound, params, named, operands,
                                                node)
                    base, negated = rotary_check.split_layout(layout) \
                        if layout is not None else (None, False)
                    return handler(self, node, positional, named,
                                   interleaved=base is not None and
                                   rotary_check.LAYOUTS[base][0], negate_sin=negated)
                result = handler(self, node, [bound[n] for n in names], named)
                if handler in BODY_CHECKS:
                    # The file's own body, replaced by what the handler
                    # emitted: run on numbers, it must compute the same
                    # (body_check), else an error at the call.
                    BODY_CHECKS[handler](self, func.node, bound, names, named, node)
                return result
            if self.in_init:
                built = self.sinusoid_table(func.node, args, kwargs, node)
                if built is not None:
                    return built
            return self.inline(func.node, None, args, kwargs, node)
        if isinstance(func, V.Closure):
            return self.inline(func.node, None, args, kwargs, node, outer=func.env)
        if isinstance(func, V.ClassRef):
            if not self.in_init:
                raise FrontendError("creating module '%s' in forward is not supported"
                                    % func.name, node)
            return self.instantiate(func.name, args, kwargs, node, self.init_path)
        if isinstance(func, V.Instance) and func.rotary:
            return self.rotary_call(func, args, kwargs, node)
        if isinstance(func, V.Instance):
            # nn.Module.__call__ runs forward, unless a class of the file
            # overrides __call__.
            call = self.src.method(func.cls, "__call__", node, required=False)
            if call is not None:
                return self.inline(call, func, args, kwargs, node)
            forward = self.src.method(func.cls, "forward", node)
            return self.inline(forward, func, args, kwargs, node)
        if isinstance(func, V.Linear):
            return self.linear(func, self.one_arg(args, kwargs, node), node)
        if isinstance(func, V.NoneLayer):
            return self.none_call(func, self.one_arg(args, kwargs, node), node)
        if isinstance(func, V.Norm):
            return self.norm(func, self.one_arg(args, kwargs, node), node)
        if isinstance(func, V.Activation):
            x = self.one_arg(args, kwargs, node)
            if func.inplace:
                return self.unary_into(func.kind, x, x, node)
            return self.activation(func.kind, x, node)
        if isinstance(func, V.Identity):
            return self.one_arg(args, kwargs, node)
        if isinstance(func, V.ModuleList) and func.sequential:
            x = self.one_arg(args, kwargs, node)
            for item in func.items:
                x = self.call(item, [x], {}, node, env)
            return x
        if isinstance(func, V.SoftmaxModule):
            x = self.one_arg(args, kwargs, node)
            if isinstance(x, V.AttentionChain):
                return self.chain_softmax(x, func.dim, node)
            return self.opaque("torch.nn.Softmax", [x], {}, node)
        if isinstance(func, V.BoundMethod):
            if isinstance(func.obj, V.Instance):
                fn = self.src.method(func.obj.cls, func.name, node)
                if any(isinstance(d, ast.Name) and d.id == "staticmethod"
                       for d in fn.decorator_list):
                    return self.inline(fn, None, args, kwargs, node)
                if any(self.src.dotted(d) == "classmethod" for d in fn.decorator_list):
                    # cls is the instance's class: its class attributes.
                    return self.inline(fn, V.ClassRef(func.obj.cls), args, kwargs, node)
                return self.inline(fn, func.obj, args, kwargs, node)
            if isinstance(func.obj, V.ClassRef):
                # Cls.f(...) / cls.f(...): a staticmethod, a classmethod (cls
                # bound), or the function itself (Base.f(self, ...)).
                fn = self.src.method(func.obj.node, func.name, node)
                if any(self.src.dotted(d) == "classmethod" for d in fn.decorator_list):
                    return self.inline(fn, func.obj, args, kwargs, node)
                return self.inline(fn, None, args, kwargs, node)
            return self.method(func.obj, func.name, args, kwargs, node)
        if callable(func) and getattr(func, "_tx_builtin", False):
            return func(self, node, args, kwargs)
        if isinstance(func, V.Unavailable):
            raise FrontendError(func.why, node)
        raise FrontendError("cannot call %s" % self.describe(func), node)

    def one_arg(self, args, kwargs, node):
        values = list(args) + list(kwargs.values())
        if len(values) != 1:
            raise FrontendError("expected one argument, got %d" % len(values), node)
        return values[0]

    def attention_implementation(self, key, node):
        """ALL_ATTENTION_FUNCTIONS[key]: the handler of that implementation
        (table.ATTENTION_IMPLEMENTATIONS)."""
        if key not in table.ATTENTION_IMPLEMENTATIONS:
            raise FrontendError("attention implementation %s is not supported (known: %s)"
                                % (self.describe(key) if not isinstance(key, str)
                                   else "'%s'" % key,
                                   ", ".join(sorted(table.ATTENTION_IMPLEMENTATIONS))), node)
        return V.Dotted(table.ATTENTION_IMPLEMENTATIONS[key])

    def ordered_dict(self, args, kwargs, node):
        """OrderedDict(), OrderedDict([(key, value), ...]), OrderedDict(key=value):
        a dict of any values (modules too), in that order."""
        if len(args) > 1:
            raise FrontendError("OrderedDict takes at most one positional argument", node)
        result = {}
        if args and isinstance(args[0], dict):
            result.update(args[0])
        elif args:
            if not isinstance(args[0], (list, tuple)):
                raise FrontendError("OrderedDict(...) of %s is not supported; expected a "
                                    "list of (key, value) pairs" % self.describe(args[0]),
                                    node)
            for pair in args[0]:
                if not isinstance(pair, tuple) or len(pair) != 2:
                    raise FrontendError("OrderedDict(...): each item must be a (key, value) "
                                        "pair, got %s" % self.describe(pair), node)
                result[pair[0]] = pair[1]
        result.update(kwargs)
        return result

    def call_named(self, name, args, kwargs, node):
        if self.src.is_logging(name):
            return None  # logger.warning_once(...), warnings.warn(...): no op
        at_import = table.lookup_import_time_function(name)
        if at_import is not None:
            # transformers' get_torch_version(), packaging's version.parse:
            # Python values, in __init__ too.
            return at_import(self, node, args, kwargs)
        if name == "collections.OrderedDict":
            # nn.Sequential(OrderedDict([("fc1", ...), ...])): a dict keeps
            # insertion order, all an OrderedDict adds that the frontend reads.
            return self.ordered_dict(args, kwargs, node)
        if self.in_init:
            factory = table.lookup_module(name)
            if factory is not None:
                return factory(self, node, self.init_path, args, kwargs)
            if name.startswith("math.") and hasattr(math, name[5:]):
                # GPT-J's scale_attn = math.sqrt(head_dim): a Python number.
                return _plain(getattr(math, name[5:]))(self, node, args, kwargs)
            if name in ("torch.Tensor", "torch.FloatTensor") and args and \
                    not isinstance(args[0], (tuple, list)):
                # ImageGPT's nn.Parameter(torch.Tensor(hidden)): the legacy
                # constructor of sizes, uninitialised (a list is data: not this).
                return table.init_tensor(self, node, args, kwargs)
            if name == "torch.full":
                # Mimi's layer scale nn.Parameter(torch.full((n,), scale)):
                # the sizes (the checkpoint gives the values).
                a = table.bind(name, ["size", "fill_value", "*", ("out", None),
                                      ("dtype", None), ("layout", None), ("device", None),
                                      ("requires_grad", False)], args, kwargs, node,
                               fixed=("out",))
                if not isinstance(a["size"], (tuple, list)):
                    raise FrontendError("torch.full: the sizes must be a tuple or list "
                                        "known at import", node)
                return table.init_tensor(self, node, [tuple(a["size"])], {})
            if name in table.INIT_TENSORS:
                t = table.init_tensor(self, node, args, kwargs)
                if name == "torch.ones":
                    t.fill = "ones"
                return t
            if name in table.INIT_MASKS:
                return table.INIT_MASKS[name](self, node, args, kwargs)
            if name in table.INIT_SCALARS:
                # CodeGen's scale_attn = torch.sqrt(torch.tensor(head_dim,
                # dtype=torch.float32)).to(torch.get_default_dtype()): a 0-d
                # tensor of a number known at import is that number.
                return table.INIT_SCALARS[name](self, node, args, kwargs)
            if name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return table.parameter(self, node, args, kwargs)
            raise FrontendError("unknown module class or function '%s' in __init__" % name,
                                node)
        handler = table.lookup_function(name)
        if handler is not None:
            return handler(self, node, args, kwargs)
        if name.endswith("ALL_ATTENTION_FUNCTIONS.get_interface"):
            # get_interface(implementation, default): the default for eager,
            # else as the subscript above.
            impl = args[0] if args else kwargs.get("attn_implementation")
            if impl == "eager" and len(args) > 1:
                return args[1]
            return self.attention_implementation(impl, node)
        if name.startswith("math.") and hasattr(math, name[5:]):
            return _plain(getattr(math, name[5:]))(self, node, args, kwargs)
        if name in table.STATELESS_MODULES:
            # CodeGen's nn.Softmax(dim=-1)(attn_weights): a module without
            # parameters, made and called in forward.
            return table.lookup_module(name)(self, node, "", args, kwargs)
        if table.lookup_module(name) is not None:
            raise FrontendError("creating module '%s' in forward is not supported" % name,
                                node)
        return self.opaque(name, args, kwargs, node)

    def inline(self, fn, instance, args, kwargs, node, outer=None):
        """Runs a method or a function of the file on these arguments
        (`outer`: the scope a closure was defined in, read where its own
        names do not bind)."""
        if self.depth > 50:
            raise FrontendError("calls nested too deeply (recursion?)", node)
        kwargs = self.deprecated_kwargs(fn, kwargs)
        env = self.bind(fn, ([instance] if instance is not None else []) + list(args),
                        kwargs, node)
        if outer is not None:
            env = V.Scope(env, outer)
        self.depth += 1
        saved, self.hint = self.hint, None
        try:
            self.run_block(fn.body, env)
        except _Return as r:
            # The return statement that ended the last call to finish (for
            # the outermost call, forward's own): errors about what forward
            # returns point at it.
            self.last_return = r.node
            return r.value
        finally:
            self.depth -= 1
            self.hint = saved
        self.last_return = None
        return None

    def rotary_layout(self, fn, bound, params, named, operands, node):
        """The file's own rotary helper, replaced by tx.rotary: run on
        symbolic values (rotary_check), it must compute tx.rotary's NeoX or
        interleaved rotation of each tensor the handler rotates, with the
        cos/sin the handler gives tx.rotary (`operands`: table.
        rotary_operands), else an error at the call, never another rotation.
        Returns the layout of cos/sin it was checked in
        (rotary_check.LAYOUTS), or None when the handler's own checks reject
        its arguments. A helper without `unsqueeze_dim` (GPT-J's, on [batch,
        tokens, heads, head_dim]) gets the dimension of the heads: the check
        found cos/sin broadcast over them."""
        xs, (cos, sin) = operands

        def lead(v):
            return ["1" if d is None else ("T" if d == 0 else "H") for d in v.dims[:-1]]

        for x in xs:
            if not isinstance(x, V.Tensor) or x.role is not None or x.type is None or \
                    x.dims is None or not self.rotary_shaped(x):
                return None  # the handler's error
        for c in (cos, sin):
            if not isinstance(c, V.Tensor) or c.role not in ("cos", "sin") or \
                    c.dims is None or c.dims[-1] != 1:
                return None
        if cos is sin:
            raise FrontendError("%s (line %d) is given one tensor as both cos and sin: "
                                "not supported" % (fn.name, fn.lineno), node)
        spec, order = {}, []
        for name, v in bound.items():
            if any(v is x for x in xs):
                spec[name] = rotary_check.Input(v.type.shape[-1], lead(v))
            elif v is cos or v is sin:
                spec[name] = rotary_check.Rope("cos" if v is cos else "sin", lead(v))
            elif isinstance(v, V.Tensor):
                raise FrontendError("%s (line %d) takes the tensor '%s', which tx.rotary "
                                    "does not (it rotates %s by cos and sin): not supported"
                                    % (fn.name, fn.lineno, name,
                                       " and ".join("'%s'" % n for n, w in bound.items()
                                                    if any(w is x for x in xs))), node)
            elif isinstance(v, V.Positions):
                spec[name] = rotary_check.Positions()
            elif v is None or isinstance(v, (bool, int, float, str)):
                spec[name] = v
            else:
                spec[name] = rotary_check._Opaque()
        for x in xs:
            order.append(next(n for n, v in bound.items() if v is x))
        rot = table.rotary_dim(self, xs[0], node) or xs[0].type.shape[-1]
        if rot < 2 or rot % 2 or any(rot > x.type.shape[-1] for x in xs):
            return None  # the handler's error (an odd or too wide rotary dimension)
        try:
            layout = rotary_check.classify(self.src, fn, spec, order, rot)
        except rotary_check.NotRotary as e:
            raise FrontendError(
                "%s (line %d) computes neither rotation of tx.rotary (Llama's rotate-halves, "
                "the interleaved pairs of GPT-J's rotate_every_two and Cohere): %s%s"
                % (fn.name, fn.lineno, e.what, " at line %d" % e.line if e.line else ""),
                node)
        if "unsqueeze_dim" not in params:
            named["unsqueeze_dim"] = next((x.dims.index(1) for x in xs
                                           if len(x.type.shape) == 3), xs[0].dims.index(1))
        return layout

    def deprecated_kwargs(self, fn, kwargs):
        """HF's @deprecate_kwarg("old", new_name="new", ...): a call passing
        `old=` passes `new=` (unless it passes `new=` too); without new_name
        HF only warns, and `old=` is passed as it is."""
        for d in fn.decorator_list:
            if not (isinstance(d, ast.Call) and (self.src.dotted(d.func) or "")
                    .rsplit(".", 1)[-1] == "deprecate_kwarg"):
                continue
            old = d.args[0].value if d.args and isinstance(d.args[0], ast.Constant) \
                else None
            new = next((k.value.value for k in d.keywords if k.arg == "new_name"
                        and isinstance(k.value, ast.Constant)), None)
            if isinstance(old, str) and isinstance(new, str) and old in kwargs:
                kwargs = dict(kwargs)
                value = kwargs.pop(old)
                kwargs.setdefault(new, value)
        return kwargs

    def default_value(self, fn, p, d, node):
        """The default `d` of parameter `p` of `fn`, as its def computed it
        (source.Source.default), else evaluated here."""
        found, value = self.src.default(fn, p.arg, node)
        return value if found else self.eval(d, {})

    def bind(self, fn, args, kwargs, node):
        a = fn.args
        params = list(getattr(a, "posonlyargs", [])) + list(a.args)
        env = {}
        kwargs = dict(kwargs)
        if len(args) > len(params) and a.vararg is None:
            raise FrontendError("%s() takes %d arguments, %d given"
                                % (fn.name, len(params), len(args)), node)
        defaults = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
        positional_only = len(getattr(a, "posonlyargs", []))
        for i, (p, d) in enumerate(zip(params, defaults)):
            # A keyword never binds a positional-only parameter (it goes to
            # **kwargs, or is an error), as in Python.
            by_keyword = i >= positional_only and p.arg in kwargs
            if i < len(args):
                env[p.arg] = args[i]
                if by_keyword:
                    raise FrontendError("%s() got '%s' twice" % (fn.name, p.arg), node)
            elif by_keyword:
                env[p.arg] = kwargs.pop(p.arg)
            elif d is not None:
                env[p.arg] = self.default_value(fn, p, d, node)
            else:
                raise FrontendError("%s() missing argument '%s'" % (fn.name, p.arg), node)
        if a.vararg is not None:
            env[a.vararg.arg] = tuple(args[len(params):])
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if p.arg in kwargs:
                env[p.arg] = kwargs.pop(p.arg)
            elif d is not None:
                env[p.arg] = self.default_value(fn, p, d, node)
            else:
                raise FrontendError("%s() missing argument '%s'" % (fn.name, p.arg), node)
        if a.kwarg is not None:
            env[a.kwarg.arg] = kwargs
        elif kwargs:
            raise FrontendError("%s() got unexpected argument '%s'"
                                % (fn.name, next(iter(kwargs))), node)
        return env

    # == __init__ =============================================================
    def instantiate(self, cls_name, args, kwargs, node, path):
        factory = table.lookup_module(cls_name)
        if factory is not None and table.only_by_suffix_error(cls_name) and \
                cls_name in self.src.classes and (
                    self.src.method(self.src.classes[cls_name], "forward", node,
                                    required=False) is not None or
                    self.table_base(self.src.classes[cls_name]) is not None):
            # A *LayerNorm class of the file with its own forward: what that
            # forward computes decides (F.layer_norm, or an error).
            factory = None
        by_suffix = factory is not None and table.only_by_suffix(cls_name) and \
            cls_name in self.src.classes and self.src.method(
                self.src.classes[cls_name], "forward", node, required=False) is not None
        if by_suffix:
            # A *RMSNorm class of the file with a forward: translated as any
            # class of the file (its __init__ run on these arguments, its
            # forward read: a norm written out becomes tx.rmsnorm, with the
            # weight it multiplies by folded in), not taken by its name.
            factory = None
        if factory is not None:
            value = factory(self, node, path, args, kwargs)
            if factory is table.conv1d and cls_name in self.src.classes:
                # The file's own Conv1D, taken by its name: checked on numbers.
                body_check.conv1d(self, self.src.classes[cls_name], args, kwargs, node)
            if isinstance(value, V.Norm) and cls_name in self.src.classes:
                cls = self.src.classes[cls_name]
                if value.weight and not self.norm_has_weight(cls, node):
                    value.weight = value.bias = False
                value.offset = self.norm_offset(cls, value, node)
                if value.offset and not value.weight:
                    raise FrontendError("%s adds %g to a weight it does not have"
                                        % (cls.name, value.offset), node)
            return value
        if table.is_rotary_module(cls_name) or self.derives_from_rotary(cls_name):
            return self.rotary_module(cls_name, args, kwargs, node, path)
        cls = self.src.classes.get(cls_name)
        if cls is None:
            raise FrontendError("unknown module class '%s'" % cls_name, node)
        inst = V.Instance(cls, path)
        inst.table_base = self.table_base(cls)
        if inst.table_base is not None and \
                self.src.method(cls, "__init__", node, required=False) is None:
            # No __init__ of the file: the torch class's, on these arguments.
            self.make_table_base(inst, args, kwargs, node)
        submodule = self.in_init
        err = self.run_init(inst, args, kwargs, node)
        if err is not None:
            if not submodule:
                raise err
            # A submodule whose __init__ cannot be evaluated (a table
            # computed with torch.arange and register_buffer): an error only
            # where forward uses it.
            return V.Unavailable(
                "module '%s' (created at line %d) is used here, but its __init__ "
                "could not be evaluated: line %s:%s: %s"
                % (cls_name, node.lineno, err.line, err.col, err.message))
        if inst.table_base is not None:
            if inst.base_spec is None:
                raise FrontendError("%s derives from %s, but its __init__ does not call "
                                    "super().__init__(...): not supported"
                                    % (cls_name, inst.table_base), node)
            if self.src.method(cls, "forward", node, required=False) is None:
                return inst.base_spec  # the torch module itself
        weight = inst.attrs.get("weight")
        if by_suffix and isinstance(weight, V.Param) and len(weight.shape) == 1:
            # Its weight keeps the names a norm's weight has (tx.param
            # @<module>, read as %w_<module>).
            weight.norm_weight = True
        return inst

    def run_init(self, inst, args, kwargs, node):
        """Runs the __init__ of `inst`'s class on these arguments: None, or
        the FrontendError that stopped it (what it declared is dropped then;
        an error PyTorch would raise too is raised)."""
        owner, init = self.src.method_owner(inst.cls, "__init__")
        if init is None:
            return None
        saved = self.in_init, self.init_path, self.init_owner
        declared = len(self.specs)
        self.in_init = True
        self.init_owner = owner
        try:
            self.inline(init, inst, args, kwargs, node)
        except FrontendError as err:
            if getattr(err, "raised", False):
                raise
            del self.specs[declared:]
            return err
        except (TypeError, ValueError, KeyError, AttributeError, IndexError,
                ZeroDivisionError) as exc:
            # Python refusing what the frontend evaluated (`x in` an imported
            # table it does not know): like a FrontendError, an error where
            # the module is used (a submodule) or now (the module itself).
            del self.specs[declared:]
            return FrontendError("unsupported here (%s: %s)" % (type(exc).__name__, exc),
                                 Translator.current or node)
        finally:
            self.in_init, self.init_path, self.init_owner = saved
        return None

    init_path = ""
    init_owner = None  # the class of the file whose __init__ is being run

    def derives_from_rotary(self, cls_name):
        """A class of the file deriving (through classes of the file) from a
        rotary embedding module (MiniCPM3's MiniCPMLongRoPE)."""
        cls = self.src.classes.get(cls_name)
        return cls is not None and any(
            table.is_rotary_module(b.id) for c in self.src.mro(cls) for b in c.bases
            if isinstance(b, ast.Name))

    def rotary_module(self, cls_name, args, kwargs, node, path):
        """A rotary embedding module (table.ROTARY_MODULE_SUFFIXES): its
        __init__ runs as far as the frontend can evaluate it (it computes
        inv_freq with torch ops), keeping the attributes set before that;
        calling it gives the function's cos/sin arguments (rotary_call)."""
        # An imported class (modular files import their base model's) has
        # no body here: no attribute.
        cls = self.src.classes.get(cls_name) or ast.ClassDef(
            name=cls_name.rsplit(".", 1)[-1], bases=[], keywords=[], body=[],
            decorator_list=[])
        inst = V.Instance(cls, path)
        inst.rotary = True
        declared = len(self.specs)
        err = self.run_init(inst, args, kwargs, node)
        if err is not None:
            inst.init_error = "line %s:%s: %s" % (err.line, err.col, err.message)
        # Its buffers are not checkpoint tensors (inv_freq is not
        # persistent): nothing it declared becomes a symbol.
        del self.specs[declared:]
        return inst

    def mask_slice(self, m, key, node):
        """GPT-Neo's `self.bias[:, :, key_length - query_length : key_length,
        :key_length]`: the leading size-1 dimensions whole, the query rows
        and key columns of the tokens (from 0: no cache at import)."""
        key = list(key) if isinstance(key, tuple) else [key]
        dims = m.lead + 2
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key[i:i + 1] = [slice(None)] * (dims - len(key) + 1)
        key += [slice(None)] * (dims - len(key))
        ok = len(key) == dims and all(isinstance(k, slice) and k.step in (None, 1)
                                      for k in key)
        ok = ok and all(k.start in (None, 0) and k.stop in (None, 1) for k in key[:m.lead])
        ok = ok and all(k.start in (None, 0) and k.stop is V.TOKENS for k in key[m.lead:])
        if not ok:
            raise FrontendError("a boolean mask of __init__ is read only as its rows and "
                                "columns of the tokens ([:, :, key_length - query_length : "
                                "key_length, :key_length])", node)
        t = V.BoolMask(m.keep, m.size, m.lead)
        t.tokens = True
        return t

    def register_buffer(self, inst):
        """nn.Module.register_buffer(name, tensor, persistent=True) in
        __init__: the attribute `name` is that value (a sinusoid table, a
        number for a 0-d tensor; what the frontend cannot compute stays
        unavailable: an error where forward reads it). A buffer is no
        checkpoint parameter: nothing is declared."""
        def handler(tr, node, args, kwargs):
            a = table.bind("register_buffer", ["name", "tensor", ("persistent", True)],
                           args, kwargs, node)
            if not isinstance(a["name"], str):
                raise FrontendError("register_buffer: the name must be a string", node)
            inst.attrs[a["name"]] = a["tensor"]
        handler._tx_builtin = True
        return handler

    def sinusoid_table(self, fn, args, kwargs, node):
        """A function of the file called in __init__ on numbers (GPT-J's and
        CodeGen's `create_sinusoidal_positions(max_positions, dim)`): when
        running its body (sinusoid.py) gives a [positions, dim] table of
        the sines and cosines of positions x frequencies, a
        V.SinusoidTable; when it gives another table, a value whose use is
        an error; None when its body is not one the check runs (the call
        is then translated as any other)."""
        bound = self.bind(fn, args, kwargs, node)
        if not bound or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                for v in bound.values()):
            return None
        rows = sinusoid.evaluate(fn, bound, self.src.aliases)
        if rows is None:
            return None
        order = sinusoid.structure(rows)
        if order not in ("sin_cos", "cos_sin"):
            return V.Unavailable("%s (line %d) builds a table that is not a sinusoid "
                                 "position table: %s; not supported"
                                 % (fn.name, fn.lineno, order))
        return V.SinusoidTable(self.init_path, len(rows), len(rows[0]),
                               order == "sin_cos")

    def sinusoid_rows(self, t, index, node):
        """`table[position_ids]` (CodeGen) or `torch.gather(table, 1,
        position_ids.unsqueeze(-1).repeat(1, 1, width))` (GPT-J): the rows
        of a sinusoid table for the tokens' positions."""
        if not isinstance(t, V.SinusoidTable):
            raise FrontendError("only a sinusoid position table (built in __init__) is "
                                "indexed by the position ids, not %s" % self.describe(t),
                                node)
        return V.SinusoidRows(t, node)

    def sinusoid_split(self, rows, args, kwargs, node):
        """`torch.split(sincos, sincos.shape[-1] // 2, dim=-1)`: the two halves
        of the rows, the function's rotary sin and cos arguments (in the
        order of the table: sin first for GPT-J's and CodeGen's), one pair
        of arguments per table (`cos`, `sin` for the first)."""
        from .table import _arg
        size = _arg(args, kwargs, 0, ("split_size_or_sections", "split_size"), node)
        dim = _arg(args, kwargs, 1, "dim", node, 0)
        half = rows.table.width // 2
        if dim not in (-1, 2) or not (size == half or list(size) == [half, half]
                                      if isinstance(size, (int, list, tuple)) and
                                      not isinstance(size, bool) else False):
            raise FrontendError("the rows of a sinusoid table may only be split in their "
                                "two halves (split(%d, dim=-1)), got split(%s, dim=%s)"
                                % (half, self.describe(size), self.describe(dim)), node)
        key = ("sinusoid", rows.table.path)
        if key not in self.rope_tables and list(self.rope_tables) == [None]:
            self.rope_tables[key] = self.rope_tables[None]
        if key not in self.rope_tables:
            taken = {name for _, name in self.em.args}
            suffix = rows.table.path.replace(".", "_")
            names = ("cos", "sin") if not taken & {"cos", "sin"} else \
                ("cos_" + suffix, "sin_" + suffix)
            self.rope_tables[key] = self.rope_pair(names)
        cos, sin = self.rope_tables[key]
        for c in (cos, sin):
            self.fix_last(c, half, node, "rotary %s" % c.role)
        return (sin, cos) if rows.table.sin_first else (cos, sin)

    def positions_method(self, p, name, args, kwargs, node):
        """The position ids' methods GPT-J uses to gather a sinusoid table's
        rows: `.unsqueeze(-1)`, then `.repeat(1, 1, width)`; dtype and
        device conversions."""
        if name in ("to", "long", "int", "type", "contiguous", "detach"):
            return p
        if name == "unsqueeze" and p.columns is None and len(args) == 1 and not kwargs \
                and args[0] in (-1, 2):
            return V.Positions(columns=1)
        if name == "repeat" and p.columns == 1 and not kwargs:
            sizes = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
                else list(args)
            if len(sizes) == 3 and sizes[0] == 1 and sizes[1] == 1 and \
                    isinstance(sizes[2], int) and not isinstance(sizes[2], bool) and \
                    sizes[2] > 0:
                return V.Positions(columns=sizes[2])
        if name == "size":
            sizes = p.sizes()
            return sizes if not args else sizes[args[0]]
        raise FrontendError("%s: .%s(%s) is not supported (they only select the rows of "
                            "a rotary table)" % (self.describe(p), name, ", ".join(
                                self.describe(a) for a in args)), node)

    def table_method(self, t, name, args, kwargs, node):
        """A sinusoid table's methods: dtype/device conversions, and GPT-J's
        `.repeat(batch, 1, 1)` (batch 1)."""
        if name in ("to", "float", "type", "contiguous", "detach"):
            return t
        if name == "repeat" and not kwargs and not t.batch:
            sizes = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
                else list(args)
            if sizes == [1, 1, 1]:
                return V.SinusoidTable(t.path, t.rows, t.width, t.sin_first, batch=True)
        if name == "size":
            sizes = t.sizes()
            return sizes if not args else sizes[args[0]]
        raise FrontendError("a sinusoid position table: .%s() is not supported (only its "
                            "rows for the position ids are read)" % name, node)

    def rotary_call(self, module, args, kwargs, node):
        """`self.rotary_emb(x, position_ids)` (or `seq_len=`): the (cos, sin)
        of the tokens' positions, arguments of the function; one pair per
        module attribute name (`cos`, `sin` for the first)."""
        for v in list(args) + list(kwargs.values()):
            if not (v is None or v is V.TOKENS or isinstance(v, (V.Tensor, V.Positions)) or
                    (isinstance(v, int) and not isinstance(v, bool))):
                raise FrontendError("a rotary embedding module takes a tensor, the "
                                    "forward's position_ids or a sequence length here, "
                                    "got %s" % self.describe(v), node)
        tensors = [v for v in list(args) + list(kwargs.values()) if isinstance(v, V.Tensor)]
        if len(tensors) > 1:
            # ESM's RotaryEmbedding(q, k) returns q and k rotated, not the
            # tables: never read as (cos, sin).
            raise FrontendError("a rotary embedding module called with %d tensors (one that "
                                "rotates them itself, as ESM's RotaryEmbedding(q, k)?) is "
                                "not supported: the frontend reads a rotary module's result "
                                "as its (cos, sin) tables" % len(tensors), node)
        key = module.path.rsplit(".", 1)[-1]
        if key not in self.rope_tables and list(self.rope_tables) == [None]:
            # The forward's own position_embeddings (HF v4.4x layers take
            # both, and compute them with the module only when not given):
            # the same table.
            self.rope_tables[key] = self.rope_tables[None]
        if key not in self.rope_tables:
            taken = {name for _, name in self.em.args}
            names = ("cos", "sin") if not taken & {"cos", "sin"} else \
                ("cos_" + key, "sin_" + key)
            self.rope_tables[key] = self.rope_pair(names)
        return self.rope_tables[key]

    def norm_has_weight(self, cls, node):
        """Whether a norm class of the file (its forward not translated) has
        a weight: its __init__ sets `self.weight` (at the top level of
        __init__; set in a branch, or never set but read, is an error), or
        it sets none and reads none (an RMSNorm without a scale)."""
        init = next((m for m in cls.body if isinstance(m, ast.FunctionDef)
                     and m.name == "__init__"), None)
        if init is None:
            return True  # a class declared a norm (--norm) without a body
        def is_weight(t):
            return isinstance(t, ast.Attribute) and t.attr == "weight" and \
                isinstance(t.value, ast.Name) and t.value.id == "self"
        top = [st for st in init.body
               if isinstance(st, (ast.Assign, ast.AnnAssign)) and
               any(is_weight(t) for t in (st.targets if isinstance(st, ast.Assign)
                                          else [st.target]))]
        anywhere = [n for n in ast.walk(init)
                    if isinstance(n, (ast.Assign, ast.AnnAssign)) and
                    any(is_weight(t) for t in (n.targets if isinstance(n, ast.Assign)
                                               else [n.target]))]
        if top:
            return True
        if anywhere:
            raise FrontendError("%s sets self.weight only in a branch of __init__ (line "
                                "%d): whether the norm has a weight is not known; not "
                                "supported" % (cls.name, anywhere[0].lineno), node)
        reads = [n for m in cls.body if isinstance(m, ast.FunctionDef)
                 for n in ast.walk(m) if is_weight(n)]
        if reads:
            raise FrontendError("%s reads self.weight (line %d) but its __init__ does not "
                                "set it: not supported" % (cls.name, reads[0].lineno), node)
        return False

    def norm_offset(self, cls, norm, node):
        """A norm class of the file is tx.rmsnorm or tx.layernorm; its body is
        not translated, but one whose methods (other than __init__) scale by
        (c + weight), as Gemma's `output * (1.0 + self.weight.float())`, is an
        rmsnorm with weight_offset c: returns c (0.0 when there is none)."""
        found = {}
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef) or method.name == "__init__":
                continue
            for n in ast.walk(method):
                if not (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add)):
                    continue
                for const, other in ((n.left, n.right), (n.right, n.left)):
                    if isinstance(const, ast.Constant) and \
                            isinstance(const.value, (int, float)) and \
                            not isinstance(const.value, bool) and \
                            any(isinstance(a, ast.Attribute) and a.attr == "weight"
                                for a in ast.walk(other)):
                        found.setdefault(float(const.value), n)
        if not found:
            return 0.0
        if norm.kind != "rmsnorm":
            n = next(iter(found.values()))
            raise FrontendError("%s scales by (%g + weight) (line %d): a weight offset is "
                                "supported on an RMSNorm (tx.rmsnorm offset), not on a %s"
                                % (cls.name, next(iter(found)), n.lineno, norm.kind), node)
        if len(found) > 1:
            lines = ", ".join(str(l) for l in sorted(n.lineno for n in found.values()))
            raise FrontendError("%s adds different constants to its weight (lines %s): "
                                "this norm is not supported" % (cls.name, lines), node)
        return next(iter(found))

    def declare(self, inst, attr, value, stmt, env):
        """`self.attr = value` in __init__: names what it declares."""
        path = (inst.path + "." if inst.path else "") + attr
        old = inst.attrs.get(attr)
        if old is not None and old is not value and not any(
                v is old for k, v in inst.attrs.items() if k != attr):
            # The module it replaces is gone, as in PyTorch: its layers are
            # not the module's (a second `self.up = nn.Linear(..., bias=True)`
            # is the one forward calls and the checkpoint holds).
            self.undeclare(old)
        self.rebase(value, path)
        alternative = self.linear_alternative(stmt) if value is None else None
        if alternative is not None:
            # The layer it would have been gives a call of it its type.
            try:
                would_be = self.eval(alternative, env)
            except FrontendError:
                would_be = None
            value = V.NoneLayer(path, stmt)
            value.would_be = would_be if isinstance(would_be, V.Linear) else None
            if would_be in self.specs:
                self.specs.remove(would_be)
            self.specs.append(value)
        return value

    def undeclare(self, value):
        """Drops what `value` (a module attribute being replaced) declared."""
        if isinstance(value, V.Spec):
            if value in self.specs:
                self.specs.remove(value)
        elif isinstance(value, V.LinearWeight):
            self.undeclare(value.layer)
        elif isinstance(value, V.ModuleList):
            for item in value.items:
                self.undeclare(item)
        elif isinstance(value, V.Instance):
            for attr in value.attrs.values():
                self.undeclare(attr)

    def rebase(self, value, path):
        """Gives a module created in an expression its attribute path."""
        if isinstance(value, V.Spec):
            value.path = path
            if value not in self.specs:
                self.specs.append(value)
        elif isinstance(value, V.ModuleList):
            value.path = path
            for name, item in zip(value.names, value.items):
                self.rebase(item, "%s.%s" % (path, name))
        elif isinstance(value, V.Instance):
            value.path = path
            for name, attr in value.attrs.items():
                if isinstance(attr, (V.Spec, V.Instance, V.ModuleList)):
                    self.rebase(attr, path + "." + name)
                elif isinstance(attr, V.LinearWeight):
                    self.rebase(attr.layer, path)  # the weight of the module itself

    def linear_alternative(self, stmt):
        """`self.x = nn.Linear(...) if c else None`: x is a layer slot."""
        value = getattr(stmt, "value", None)
        if isinstance(value, ast.IfExp):
            for arm in (value.body, value.orelse):
                if isinstance(arm, ast.Call):
                    name = self.src.dotted(arm.func)
                    if name and table.lookup_module(name) is table.linear:
                        return arm
        return None

    # == builtins =============================================================
    def flag_arg(self, inst, name, node):
        value = inst.attrs.get(name)
        if not isinstance(value, bool):
            raise FrontendError("--flag %s: self.%s is %r, not a bool" % (name, name, value),
                                node)
        key = (inst.path, name)
        if key not in self.flag_args:
            self.flag_args[key] = self.new_arg(name, "i1")
        return V.Guard(self.flag_args[key])

    def describe(self, v):
        if isinstance(v, V.Tensor) and getattr(v, "opaque_of", None) is not None:
            # Qwen3-MoE's `routing_weights, selected_experts = torch.topk(...)`.
            return "a tensor, the one result of the opaque call '%s' (line %d: tx does " \
                "not run it)" % v.opaque_of
        if isinstance(v, V.Tensor):
            return "a tensor"
        if isinstance(v, V.Instance):
            return "module '%s'" % v.cls.name
        if isinstance(v, V.Dotted):
            return "'%s'" % v.name
        if isinstance(v, (V.FunctionRef, V.ClassRef)):
            return "'%s'" % v.name
        if isinstance(v, V.AttentionChain):
            return v.what()
        if isinstance(v, V.RepeatedKV):
            return "the result of %s (line %d)" % (v.what, v.node.lineno)
        if isinstance(v, V.NormChain):
            return v.what()
        if isinstance(v, V.CausalMask):
            return "the attention mask"
        if isinstance(v, V.BoolMask):
            # Not Python's repr (an address): GPT-1's float `bias` buffer
            # multiplying the scores (`w * b + -1e4 * (1 - b)`).
            return "the attention mask buffer of __init__ (only torch.where(mask, scores, " \
                "very negative) applies it)"
        if isinstance(v, V.Positions):
            return "the position ids (no tensor in tx: they select the rows of the " \
                "rotary cos/sin arguments)"
        if isinstance(v, V.LinearWeight):
            return "the weight of 'self.%s' (an nn.Linear subclass with its own forward)" \
                % v.layer.path
        if isinstance(v, V.Param):
            return "parameter 'self.%s'" % v.path
        if isinstance(v, V.Spec):
            # Made but not yet an attribute (an nn.Linear in a list): no name.
            return "layer 'self.%s'" % v.path if v.path else \
                "a module (%s)" % type(v).__name__
        if isinstance(v, (list, tuple)):
            # Its items as this describes them, not Python's reprs.
            items = ", ".join(repr(x) if isinstance(x, (int, float, str, type(None)))
                              else self.describe(x) for x in v[:4]) + \
                (", ..." if len(v) > 4 else "")
            return ("%s [%s]" if isinstance(v, list) else "%s (%s)") % (type(v).__name__,
                                                                         items)
        return "%s %r" % (type(v).__name__, v) if not isinstance(v, object.__class__) \
            else type(v).__name__


class _Missing:
    pass


_MISSING = _Missing()
