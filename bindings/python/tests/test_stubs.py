"""The type stubs (__init__.pyi) ship with the package and match it."""
import ast
import pathlib

import futoin_async


def stub_tree():
    pyi = pathlib.Path(futoin_async.__file__).with_name("__init__.pyi")
    assert pyi.is_file(), "__init__.pyi is not installed"
    assert pyi.with_name("py.typed").is_file(), "py.typed is not installed"
    return ast.parse(pyi.read_text())


def test_every_stubbed_name_exists():
    missing = []
    for node in stub_tree().body:
        if isinstance(node, ast.ClassDef):
            cls = getattr(futoin_async, node.name, None)
            if cls is None:
                missing.append(node.name)
                continue
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    names = [item.name]
                elif isinstance(item, ast.AnnAssign):
                    names = [item.target.id]
                elif isinstance(item, ast.Assign):
                    names = [t.id for t in item.targets]
                else:
                    continue
                for name in names:
                    if name.startswith("__") and name != "__init__":
                        continue
                    # descriptors of C types and Python methods live on the class;
                    # State's keys and sync objects' ptr are set per instance
                    if not hasattr(cls, name) and name not in (
                            "error_info", "last_exception", "async_stack", "ptr", "code",
                            "info"):
                        missing.append(f"{node.name}.{name}")
        elif isinstance(node, ast.FunctionDef):
            if not hasattr(futoin_async, node.name):
                missing.append(node.name)
    assert missing == []


def test_every_public_name_is_stubbed():
    stubbed = set()
    for node in stub_tree().body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            stubbed.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            stubbed.add(node.target.id)
        elif isinstance(node, ast.Assign):
            stubbed.update(t.id for t in node.targets)
    assert set(futoin_async.__all__) - stubbed == set()
