"""Imports run one way, down the data flow (docs/design/architecture.md):

    cli → commands → web → facade → services
        → grader → {review, crag, export, checker, table, the web page's read models}
        → deepread → {audit, checklist}
        → {llm, ingest, index, prompts, queue} → store → {text, config, resources, http} → {errors, files}

A module may import its own package and any package on a lower layer, never a
package on its own layer or above. Above the façade only the façade, the composition root
(services), the web page's read models, errors and config may be imported: the commands
and the web page call nothing else. Imports inside functions count as well: they are
dependencies all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "reader"
LAYERS = [
    {"errors", "files"},
    {"text", "config", "resources", "http"},
    {"store"},
    {"llm", "ingest", "index", "prompts", "queue"},
    {"audit", "checklist"},
    {"deepread", "annotations"},  # the deep read; the reader's judgements and highlights
    {"review", "crag", "export", "checker", "table", "web.read_models"},
    {"grader"},  # the relevance grader scores with the checker's cross-encoder code
    {"services"},
    {"facade"},
    {"web"},
    {"commands"},
    {"cli"},
    {"__main__", "__init__"},  # `python -m reader`, and `from reader import Reader`
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
FACADE = RANK["facade"]
CALLABLE_FROM_THE_TOP = {"facade", "services", "web.read_models", "errors", "config"}
# the web page's read models: plain data from the database, for its pages and nothing else
READ_MODELS = {
    "reader.web",
    "reader.web.library",
    "reader.web.paper_page",
    "reader.web.page_text",
    "reader.web.pdf",
    "reader.web.questions",
}


def part_of(module: str) -> str:
    """'reader.audit.loop' -> 'audit'; 'reader' -> '__init__'; 'reader.web.library' -> 'web.read_models'."""
    if module in READ_MODELS:
        return "web.read_models"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import of a reader module in the file."""
    own = module_name(path, root)
    package = own if path.name == "__init__.py" else own.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # `from reader import views` imports the module reader.views
                sub = f"{target}.{alias.name}"
                is_module = (root / Path(*sub.split("."))).with_suffix(".py").exists() or (
                    root / Path(*sub.split("."))
                ).is_dir()
                found.append((node.lineno, sub if is_module else target))
    return [(line, name) for line, name in found if name == "reader" or name.startswith("reader.")]


def violations(root: Path = ROOT) -> list[str]:
    problems = []
    for path in sorted((root / "reader").rglob("*.py")):
        source = part_of(module_name(path, root))
        for line, target in imported_modules(path, root):
            imported = part_of(target)
            if imported == source:
                continue
            where = f"{path.relative_to(root)}:{line} imports {target}"
            if source not in RANK or imported not in RANK:
                problems.append(
                    f"{where}: {source if source not in RANK else imported} has no layer "
                    f"in tests/test_layers.py"
                )
            elif RANK[imported] >= RANK[source]:
                problems.append(f"{where}: {imported} is not below {source}")
            elif RANK[source] > FACADE and RANK[imported] < FACADE and imported not in CALLABLE_FROM_THE_TOP:
                problems.append(
                    f"{where}: above the façade only {sorted(CALLABLE_FROM_THE_TOP)} may be imported"
                )
    return problems


def test_imports_run_down_the_layers():
    assert violations() == []


def test_every_package_has_a_layer():
    parts = {part_of(module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert parts - set(RANK) == set()


def test_the_check_catches_imports_against_the_order(tmp_path):
    """The walk sees upward imports (lazy ones too), same-layer imports and a command skipping the façade."""
    for name, source in {
        "text/split.py": "def f():\n    from reader.audit.loop import audit_text\n",
        "llm/base.py": "from reader.index.hits import SearchHit\n",
        "commands/read.py": "from reader.facade import Reader\nfrom reader.deepread import deep_read\n",
        "audit/loop.py": "from ..llm import base\n",
    }.items():
        path = tmp_path / "reader" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    assert violations(tmp_path) == [
        "reader/commands/read.py:2 imports reader.deepread: above the façade only "
        "['config', 'errors', 'facade', 'services', 'web.read_models'] may be imported",
        "reader/llm/base.py:1 imports reader.index.hits: index is not below llm",
        "reader/text/split.py:2 imports reader.audit.loop: audit is not below text",
    ]


def test_the_architecture_doc_lists_the_layers():
    """docs/design/architecture.md's layer block names the same layers, in the same order, as LAYERS."""
    doc = (ROOT / "docs" / "design" / "architecture.md").read_text(encoding="utf-8")
    block = doc.split("## Layers", 1)[1].split("```", 2)[1]
    listed = [{name.strip() for name in line.split(",")} for line in block.strip().splitlines()]
    assert listed == LAYERS
    parts_table = doc.split("## What each part owns", 1)[1].split("\n## ", 1)[0]
    undocumented = {name for names in LAYERS[:-1] for name in names if f"| `{name}` |" not in parts_table}
    assert undocumented == set()
