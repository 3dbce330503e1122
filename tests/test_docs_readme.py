"""The README is a front door: the two commands first (the second is what .ci/run runs), under
8 kB, and every link in it and in docs/ leads to a file and a heading that exist."""

from __future__ import annotations

import re

from conftest import ROOT


def slug(title: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def test_the_readme_opens_with_the_two_commands_and_stays_small():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) <= 8 * 1024
    opening = re.match(r"# reader\n\n```bash\n(.+)\n(.+)\n```\n", readme)
    assert opening, "the README starts with one code block of two commands"
    install, test_run = opening.groups()
    assert install.endswith("reader review papers/ --export notes/")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip("\n").splitlines()[-1]
    assert ci == test_run, ".ci/run runs exactly the README's second command"


def test_every_link_in_the_docs_leads_somewhere():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = []
    for page in pages:
        for target, anchor in re.findall(
            r"\]\(([^)#\s]*)(?:#([^)\s]+))?\)", page.read_text(encoding="utf-8")
        ):
            if target.startswith(("http://", "https://")):
                continue
            path = (page.parent / target) if target else page
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and path.suffix == ".md":
                headings = re.findall(r"(?m)^#+ (.*)$", path.read_text(encoding="utf-8"))
                if anchor not in {slug(h) for h in headings}:
                    broken.append(f"{page.relative_to(ROOT)}: {target}#{anchor}")
    assert not broken, broken
