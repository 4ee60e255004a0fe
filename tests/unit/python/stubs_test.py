"""The type stubs (python/dtrain/__init__.pyi, torch.pyi) against the modules as built: the same
public names, the same members of each class (properties as properties, methods as methods) and
the same parameters (names, order, keyword-only, defaulted), both ways; py.typed beside them; and
every public function, method and property with a docstring that help() shows."""
import ast
import glob
import importlib
import inspect
import os

import pytest

import dtrain

PACKAGE = os.path.dirname(dtrain.__file__)
# Dunder methods a stub declares because users call them (len(), iteration, with, construction).
DUNDERS = {"__init__", "__len__", "__iter__", "__enter__", "__exit__"}


def has_torch_backend():
    return bool(glob.glob(os.path.join(PACKAGE, "_torch*.so")))


MODULES = ["dtrain"] + (["dtrain.torch"] if has_torch_backend() else [])


# --- the stub, read with ast -----------------------------------------------------------------

class StubClass:
    def __init__(self, node, classes):
        self.node = node
        self.members = {}  # name -> "method" | "property" | "attribute", with (args or None)
        for base in node.bases:  # bases defined in the same stub contribute their members
            if isinstance(base, ast.Name) and base.id in classes:
                self.members.update(classes[base.id].members)
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                decorators = {d.id for d in item.decorator_list if isinstance(d, ast.Name)}
                kind = "property" if "property" in decorators else "method"
                self.members[item.name] = (kind, item.args)
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                self.members[item.target.id] = ("attribute", None)


def read_stub(module):
    name = "__init__.pyi" if module == "dtrain" else module.split(".")[-1] + ".pyi"
    path = os.path.join(PACKAGE, name)
    assert os.path.isfile(path), f"{module}: no stub {path}"
    tree = ast.parse(open(path).read(), path)
    names, classes = {}, {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = StubClass(node, classes)
            names[node.name] = "class"
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = ("function", node.args)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = "value"
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names[target.id] = "value"
    return names, classes


def stub_parameters(args):
    """[(name, keyword_only, has_default)] of a stub's def."""
    positional = args.posonlyargs + args.args
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    out = [(a.arg, False, d) for a, d in zip(positional, defaults)]
    if args.vararg:
        out.append(("*" + args.vararg.arg, False, False))
    out += [(a.arg, True, d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        out.append(("**" + args.kwarg.arg, False, False))
    return out


# --- the module, read with inspect and pybind11's docstrings -----------------------------------

def split_top_level(text):
    """`text` split at the commas outside brackets and quotes."""
    parts, depth, quote, current = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def pybind_parameters(function, name):
    """The parameters in pybind11's signature line, `name(self: X, a: int = 0, *, b: T = None)`."""
    doc = function.__doc__ or ""
    first = doc.lstrip().split("\n", 1)[0]
    assert first.startswith(name + "("), f"{name}: no pybind11 signature in {doc!r}"
    inside = first[len(name) + 1:first.rindex(") ->")]
    out, keyword_only = [], False
    for part in split_top_level(inside):
        if part == "*":
            keyword_only = True
            continue
        pname = part.split(":", 1)[0].split("=", 1)[0].strip()
        out.append((pname, keyword_only and not pname.startswith("*"), "=" in part))
    return out


def python_parameters(function):
    out = []
    for p in inspect.signature(function).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            out.append(("*" + p.name, False, False))
        elif p.kind is p.VAR_KEYWORD:
            out.append(("**" + p.name, False, False))
        else:
            out.append((p.name, p.kind is p.KEYWORD_ONLY, p.default is not p.empty))
    return out


def runtime_parameters(function, name):
    if inspect.isfunction(function):
        return python_parameters(function)
    return pybind_parameters(function, name)


def own_classes(cls):
    """The classes of cls's MRO that dtrain defines (not object, pybind11's base, builtins or
    torch's ProcessGroup)."""
    return [c for c in cls.__mro__ if c.__module__.split(".")[0] == "dtrain"]


def runtime_members(cls):
    members = {}
    for c in reversed(own_classes(cls)):
        for name, value in vars(c).items():
            if name.startswith("_") and name not in DUNDERS:
                continue
            if name == "__init__" and not (inspect.isfunction(value) or
                                           (value.__doc__ or "").startswith("__init__(")):
                continue  # pybind11's stand-in for "no constructor"
            members[name] = value
    return members


def kind_of(value):
    if isinstance(value, property):
        return "property"
    return "method" if callable(value) else "attribute"


def public(module):
    names = {n for n in dir(module) if not n.startswith("_")}
    names -= {n for n in names if inspect.ismodule(getattr(module, n))}
    if module.__name__ == "dtrain":
        names.add("__version__")
    return names


# --- the tests -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", MODULES)
def test_the_stub_names_what_the_module_has_and_nothing_else(name):
    module = importlib.import_module(name)
    stub_names, _ = read_stub(name)
    stub_public = {n for n in stub_names if not n.startswith("_") or n == "__version__"}
    assert sorted(public(module) - stub_public) == [], "in the module, not in its stub"
    assert sorted(stub_public - public(module)) == [], "in the stub, not in the module"


@pytest.mark.parametrize("name", MODULES)
def test_every_class_has_the_stubs_members_of_the_same_kind(name):
    module = importlib.import_module(name)
    stub_names, classes = read_stub(name)
    for cname, stub in classes.items():
        if cname.startswith("_"):
            continue
        cls = getattr(module, cname)
        runtime = runtime_members(cls)
        stub_members = {m for m in stub.members if not m.startswith("_") or m in DUNDERS}
        # Instance attributes set by a Python __init__ (Shard.epoch) are not on the class.
        init = vars(cls).get("__init__")
        set_in_init = ({m for m in stub_members if f"self.{m} =" in inspect.getsource(init)}
                       if inspect.isfunction(init) else set())
        assert sorted(set(runtime) - stub_members) == [], f"{name}.{cname}: not in the stub"
        assert sorted(stub_members - set(runtime) - set_in_init) == [], \
            f"{name}.{cname}: in the stub, not in the class"
        for member, value in runtime.items():
            stub_kind, args = stub.members[member]
            want = kind_of(value)
            if stub_kind == "attribute":
                assert want != "method", f"{name}.{cname}.{member}: a method, stubbed as a value"
                continue
            assert stub_kind == want, f"{name}.{cname}.{member}: a {want}, stubbed as a {stub_kind}"
            if want == "method":
                assert stub_parameters(args) == runtime_parameters(value, member), \
                    f"{name}.{cname}.{member}: parameters differ"


@pytest.mark.parametrize("name", MODULES)
def test_every_function_has_the_stubs_parameters(name):
    module = importlib.import_module(name)
    stub_names, _ = read_stub(name)
    for fname, entry in stub_names.items():
        if isinstance(entry, tuple):
            assert stub_parameters(entry[1]) == runtime_parameters(getattr(module, fname), fname), \
                f"{name}.{fname}: parameters differ"


def test_the_package_is_marked_typed():
    assert os.path.isfile(os.path.join(PACKAGE, "py.typed"))


def described(value, name):
    """The docstring's text after pybind11's signature line(s)."""
    doc = inspect.getdoc(value) or ""
    lines = [line for line in doc.splitlines() if not line.startswith(name + "(")
             and not line.startswith("(")]
    return "\n".join(lines).strip()


@pytest.mark.parametrize("name", MODULES)
def test_every_public_function_method_and_property_has_a_docstring(name):
    module = importlib.import_module(name)
    undocumented = []
    for attr in sorted(public(module) - {"__version__"}):
        value = getattr(module, attr)
        if inspect.isclass(value):
            if not described(value, attr):
                undocumented.append(attr)
            if issubclass(value, BaseException):
                continue
            enum = hasattr(value, "__members__")  # pybind11's enum: its own __init__, name, value
            for member, v in runtime_members(value).items():
                if member in DUNDERS - {"__init__"} or (enum and member in {"__init__", "name",
                                                                             "value"}):
                    continue  # len(), iteration, with: nothing to say
                if kind_of(v) != "attribute" and not described(v, member):
                    undocumented.append(f"{attr}.{member}")
        elif callable(value) and not described(value, attr):
            undocumented.append(attr)
    assert undocumented == []


def test_help_shows_the_parameters_and_what_they_mean():
    text = dtrain.Context.allreduce_async.__doc__
    assert text.startswith("allreduce_async(self: dtrain._dtrain.Context, buf: object, op: ")
    assert ") -> dtrain._dtrain.Work\n" in text, text.split("\n")[0]
    assert "`op`" in text and "`dtype`" in text and "Work" in text
