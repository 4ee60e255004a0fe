"""The Spack recipe without Spack: it compiles, and it declares what `spack install` needs.

Spack is not installed where the tests run, so this reads the recipe's syntax tree: a released
version, the c/cxx build dependencies, zlib-api (libdtrain links libz), the cuda variant from
CudaPackage rather than a variant of its own, and a check() that `spack install --test` runs.
    spack_recipe_test.py packaging/spack/package.py
"""
import ast
import py_compile
import sys
import tempfile

path = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    py_compile.compile(path, cfile=f"{tmp}/package.pyc", doraise=True)
tree = ast.parse(open(path, encoding="utf-8").read(), path)
failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)


recipe = next(n for n in tree.body if isinstance(n, ast.ClassDef))
calls = [n for n in ast.walk(recipe) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def first_args(name):
    return [n.args[0].value for n in calls
            if n.func.id == name and n.args and isinstance(n.args[0], ast.Constant)]


def keywords(name):
    return [{k.arg: getattr(k.value, "value", None) for k in n.keywords}
            for n in calls if n.func.id == name]


released = [kw for kw in keywords("version") if "branch" not in kw]
expect(released and all(("tag" in kw) or ("sha256" in kw) for kw in released),
       "a released version(...) with a tag or a sha256, not only a branch")
deps = first_args("depends_on")
for dep in ("c", "cxx", "zlib-api", "mpi", "pmix@4:", "hwloc@2:", "yaml-cpp@0.7:"):
    expect(dep in deps, f'depends_on("{dep}")')
build_only = {n.args[0].value: {k.arg: getattr(k.value, "value", None) for k in n.keywords}
              for n in calls if n.func.id == "depends_on" and n.args}
for dep in ("c", "cxx"):
    expect(build_only.get(dep, {}).get("type") == "build", f'depends_on("{dep}", type="build")')
bases = [b.id for b in recipe.bases if isinstance(b, ast.Name)]
expect("CudaPackage" in bases, "class Dtrain(CMakePackage, CudaPackage)")
expect("cuda" not in first_args("variant"), "no variant('cuda') of its own (CudaPackage has it)")
methods = [n.name for n in recipe.body if isinstance(n, ast.FunctionDef)]
expect("check" in methods, "a check() method for `spack install --test`")

for f in failures:
    print(f"{path}: expected {f}")
sys.exit(1 if failures else 0)
