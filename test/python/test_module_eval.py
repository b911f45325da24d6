"""tx.frontend's run of a modeling file's module-level statements
(tx/frontend/module_eval.py): each name is what Python leaves it with at the
end of the import (checked against Python running the same code), a default
is what its def computed, and a name a statement the frontend cannot
evaluate may have changed is an error naming that statement, never the
value before it."""

import pytest

from tx.frontend import FrontendError
from tx.frontend.source import Source

# Module-level code whose every name the frontend knows, as Python does.
KNOWN = [
    "A = 2.0\nA *= 3.0\nA -= 1\nB = A ** 2 // 3 % 7",
    "R = 2.0\nR = R + 5.0\nS = -R if R > 3 else R\nT = not (R > 3 and S < 0)",
    "X = 1\nif X > 0:\n    Y = 'pos'\nelif X < 0:\n    Y = 'neg'\nelse:\n    Y = 'zero'",
    "A, (B, *C), D = 1, (2, 3, 4, 5), 6\nE = [*C, *range(2)]",
    "L = [1]\nL.append(2)\nL.extend((3, 4))\nL.insert(0, 0)\nP = L.pop()\nL.remove(1)\n"
    "L.reverse()\nL[0] += 10\ndel L[-1]",
    "D = {'a': 1}\nD['b'] = 2\nD.update(c=3)\nD.setdefault('d', 4)\nQ = D.pop('a')\n"
    "del D['b']\nK = sorted(D)\nG = D.get('z', 9)",
    "S = {1}\nS.add(2)\nS |= {3}\nS.discard(1)\nN = len(S)",
    "A = [1]\nB = A\nB.append(2)\nC = (A, 3)",
    "N = 0\nfor i in range(10):\n    if i % 2:\n        continue\n    N += i\n    if i > 5:\n"
    "        break\nelse:\n    N = -1",
    "N = 0\nwhile N < 10:\n    N += 3",
    "W = 4\nNAME = f'x{W:03d}-{W!r}'\nSQ = [i * i for i in range(W) if i]\n"
    "M = {k: v for k, v in zip('ab', SQ)}\nT = tuple(x for x in SQ)",
    "import math\nPI2 = math.pi * 2\nR = math.sqrt(16.0) + max(1, 2) + abs(-3) + round(2.6)",
    "from typing import TYPE_CHECKING\nX = 1\nif TYPE_CHECKING:\n    X = 2\n"
    "if __name__ == '__main__':\n    X = 3",
    "def f():\n    return 1\nF = 1\ndef F():\n    return 2\nF = 3",
    "A = 1\ndel A\nA = 2",
    "A = 'abc'.upper() + ','.join(['x', 'y']) + str(3)\nB = A[1:3] * 2\nC = A.split(',')",
]


def _python(code):
    names = {}
    exec(code, names)
    return {k: v for k, v in names.items() if not k.startswith("__") and
            not callable(v) and not type(v).__name__ == "module"}


@pytest.mark.parametrize("code", KNOWN)
def test_known_as_python(code):
    src = Source(code, "m.py")
    for name, value in _python(code).items():
        if name in src.aliases:
            continue  # an import (TYPE_CHECKING): known by its name
        got = src.global_value(name, None)
        if type(value).__name__ == "generator":
            value, got = list(value), list(got)
        assert got == value and type(got) is type(value), (name, got, value)


def test_class_attributes_at_import_end():
    src = Source("class C:\n    k = 2.0\n    k *= 3.0\n    j = k + 1\n"
                 "C.k = 9.0\nC.j *= 2\nsetattr(C, 'i', C.k + 1)\n"
                 "class D(C):\n    j = 0\nD.k += 1\n", "m.py")
    c, d = src.classes["C"], src.classes["D"]
    assert src.class_constant(c, "k") == (True, 9.0)
    assert src.class_constant(c, "j") == (True, 14.0)
    assert src.class_constant(c, "i") == (True, 10.0)
    assert src.class_constant(d, "k") == (True, 10.0)  # D's own, read from C's
    assert src.class_constant(d, "i") == (True, 10.0)  # C's
    assert src.class_constant(c, "missing") == (False, None)


def test_defaults_at_def():
    src = Source("S = 2.0\nL = [1]\ndef f(x, s=S, *, t=S * 2, l=L):\n    pass\n"
                 "class C:\n    k = 3.0\n    def m(self, s=S, k=k):\n        pass\n"
                 "S = 5.0\nL.append(2)\n", "m.py")
    f, m = src.functions["f"], src.method(src.classes["C"], "m", None)
    assert src.default(f, "s", None) == (True, 2.0)
    assert src.default(f, "t", None) == (True, 4.0)
    assert src.default(f, "l", None) == (True, [1, 2])  # the list the def got
    assert src.default(m, "s", None) == (True, 2.0)
    assert src.default(m, "k", None) == (True, 3.0)  # the class body's k


def test_classes_in_containers():
    src = Source("class A:\n    pass\nclass B:\n    pass\nCLASSES = {'a': A}\n"
                 "CLASSES['b'] = B\n", "m.py")
    value = src.global_value("CLASSES", None)
    assert [v.name for v in value.values()] == ["A", "B"]


# (code, the name read, the line that makes it unknown)
UNKNOWN = [
    ("S = 2.0\ndef f():\n    global S\n    S = 3.0\nf()", "S", 5),
    ("S = 2.0\ndef f():\n    global S\n    S = 3.0\nHOOKS = [f]\nHOOKS[0]()", "S", 6),
    ("L = [2.0]\nimport random\nrandom.shuffle(L)", "L", 3),
    ("L = [2.0]\nM = L\nregister(M)", "L", 3),
    ("L = [2.0]\nL.frobnicate()", "L", 2),
    ("L = [2.0]\nadd = L.append\nadd(3.0)", "L", 3),
    ("L = [2.0]\ndef g():\n    L.append(3.0)\ng()", "L", 4),
    ("import torch\nS = 2.0\nif torch.cuda.is_available():\n    S = 3.0", "S", 3),
    ("import torch\nL = [2.0]\nif torch.cuda.is_available():\n    L.append(3.0)", "L", 3),
    ("import torch\nS = 2.0\nfor _ in range(torch.cuda.device_count()):\n    S *= 2", "S", 3),
    ("S = 2.0\ntry:\n    import flash_attn\n    S = 3.0\nexcept ImportError:\n    pass", "S", 2),
    ("S = 2.0\nwith open('f') as fh:\n    S = 3.0", "S", 2),
    ("S = 2.0\nexec('S = 3.0')", "S", 2),
    ("S = 2.0\nglobals()['S'] = 3.0", "S", 2),
    ("import sys\nS = 2.0\nsetattr(sys.modules[__name__], 'S', 3.0)", "S", 3),
    ("import torch\nS = torch.cuda.is_available()", "S", 2),
    ("import torch\nS = 2.0\nT = S if torch.cuda.is_available() else 3.0\nU = T + 1", "U", 4),
    ("def deco(f):\n    return lambda x: 0\n@deco\ndef f(x):\n    return x", "f", 3),
]


@pytest.mark.parametrize("code,name,line", UNKNOWN)
def test_unknown_is_an_error_naming_the_statement(code, name, line):
    src = Source(code, "m.py")
    with pytest.raises(FrontendError) as err:
        src.global_value(name, None)
    assert "is not known at import: line %d " % line in str(err.value)


def test_unknown_class_attribute_and_default():
    src = Source("import torch\nclass C:\n    k = 2.0\ndef patch(c):\n    c.k = 3.0\n"
                 "patch(C)\nS = 2.0\nif torch.cuda.is_available():\n    S = 3.0\n"
                 "def f(x, s=S):\n    pass\n", "m.py")
    with pytest.raises(FrontendError, match="line 6 "):
        src.class_constant(src.classes["C"], "k")
    with pytest.raises(FrontendError, match=r"default of 's' of f \(line 10\).*line 8 "):
        src.default(src.functions["f"], "s", None)


def test_a_default_evaluated_at_the_call_must_read_what_the_def_read():
    src = Source("import torch\nfrom torch import nn\nA = nn.SiLU\n"
                 "def f(x, act=A()):\n    pass\ndef g(x, act=nn.GELU()):\n    pass\n"
                 "A = nn.GELU\n", "m.py")
    with pytest.raises(FrontendError, match="reads 'A', which line 8 changes"):
        src.default(src.functions["f"], "act", None)
    assert src.default(src.functions["g"], "act", None) == (False, None)  # as before


def test_imports_and_registrations_stay_known():
    src = Source("import torch\nfrom transformers.utils import logging\n"
                 "from transformers.pytorch_utils import ALL_LAYERNORM_LAYERS\n"
                 "logger = logging.get_logger(__name__)\n"
                 "class Norm(torch.nn.Module):\n    eps = 1e-6\n"
                 "ALL_LAYERNORM_LAYERS.append(Norm)\nlogger.info('x')\n"
                 "if is_torch_fx_available():\n    import torch.fx\n", "m.py")
    assert src.loggers == {"logger"}
    assert src.aliases["torch"] == "torch"  # `import torch.fx` binds torch as it is
    assert src.class_constant(src.classes["Norm"], "eps") == (True, 1e-6)
    assert src.aliases["ALL_LAYERNORM_LAYERS"] == \
        "transformers.pytorch_utils.ALL_LAYERNORM_LAYERS"
