"""The docs and comments name only things that exist, and cite no document outside the repository.

* Every relative markdown link in the docs (``docs/*.md``, ``README.md``, ``SECURITY.md`` and the
  READMEs of ``bench/`` and ``tests/python/oracles/``) points at a file that exists, and a
  ``#fragment`` at a heading of that file.
* Every repository path in backticks in those docs exists: a span whose first component is a
  top-level entry of the repository (``src/…``, ``tests/…``, ``Makefile``), or a file name with a
  source extension (``fuse.c``, ``ops/hybrid.h``), which must name a file of the repository.
* Every file path in a comment or docstring of the C and Python sources (``src/``, ``include/``,
  ``python/``, ``tests/``, ``tools/``, ``bench/``) of the form ``<dir>/<name>.c`` (``.h``,
  ``.inc``, ``.py``, ``.md``) whose folder is one of the repository's resolves to a file there;
  a bare ``<name>.c`` must be a file somewhere in the repository. Names that are legitimately
  not in the repository (other projects' files, files generated at build time) are listed in
  ``EXTERNAL_NAMES`` with the reason.
* No source or doc cites the team's design notes that live outside the repository: they were
  brought into ``docs/`` (design.md, format.md, reliability.md, testing.md).

Pure text checks: no library, no network.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

DOC_FILES = ["README.md", "SECURITY.md", "bench/README.md", "tests/python/oracles/README.md"]
SOURCE_DIRS = ["src", "include", "python", "tests", "tools", "bench"]
C_SUFFIXES = {".c", ".h", ".inc"}

# File names that are mentioned on purpose but are not files of this repository.
EXTERNAL_NAMES = {
    # the FlatBuffers project's C++ header whose enum src/format/flexbuffer.c mirrors
    "flexbuffers.h",
    # TFLite's schema and sources, cited as the origin of a fact
    "schema.fbs",
    # generated at build time by tests/fuzz/make_seeds.py into the fuzz build directory
    "value_models.h",
    "cache_models.h",
    # written by a run, not kept in the repository (wick graph's stage dump, the fuzz scripts')
    "stages.txt",
    "graph.html",
    "report.txt",
    "compiles.txt",
    "campaign.log",
    # the install test's consumer is built from tests/install/consumer/, named by its file
    # system path inside a temporary prefix
    "wick.pc",
}

# The team's notes that docs/ replaced. Spelled in pieces so that this file does not cite them.
OUTSIDE_NOTES = [n + ".md" for n in ("DESIGN", "FORMAT", "RELIABILITY", "COVERAGE", "PERFORMANCE")]


@cache
def tracked_files() -> frozenset[str]:
    """Repository-relative paths of the files in the repository: git's view when available (tracked
    files and new ones not ignored, so a file being added counts before it is committed)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        files = {line for line in out.splitlines() if line}
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "build", "__pycache__"}
        files = {
            p.relative_to(REPO).as_posix()
            for p in REPO.rglob("*")
            if p.is_file() and not (skip & set(p.relative_to(REPO).parts))
        }
    # A file deleted in the working tree but not yet in the index does not exist.
    return frozenset(f for f in files if (REPO / f).is_file())


@cache
def tracked_dirs() -> frozenset[str]:
    dirs = set()
    for f in tracked_files():
        parts = f.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    return frozenset(dirs)


@cache
def basenames() -> frozenset[str]:
    return frozenset(f.rsplit("/", 1)[-1] for f in tracked_files())


def top_level() -> set[str]:
    return {f.split("/", 1)[0] for f in tracked_files()}


def doc_files() -> list[str]:
    docs = sorted(f for f in tracked_files() if f.startswith("docs/") and f.endswith(".md"))
    return docs + [f for f in DOC_FILES if f in tracked_files()]


def source_files() -> list[str]:
    out = []
    for f in sorted(tracked_files()):
        if f.split("/", 1)[0] not in SOURCE_DIRS:
            continue
        if Path(f).suffix in C_SUFFIXES or f.endswith(".py"):
            out.append(f)
    return out


def _normalize(path: str) -> str:
    parts: list[str] = []
    for p in path.split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if not parts:
                return "../"  # outside the repository
            parts.pop()
        else:
            parts.append(p)
    return "/".join(parts)


def resolves(ref: str, from_file: str) -> bool | None:
    """True when ``ref`` names a file or folder of the repository, False when it names one that
    does not exist in a folder that does, None when it is not a repository path at all."""
    ref = ref.rstrip("/")
    here = str(Path(from_file).parent)
    if "/" not in ref:
        if ref in EXTERNAL_NAMES:
            return None
        return ref in basenames() or ref in top_level()
    folder = ref.rsplit("/", 1)[0]
    candidates = [_normalize(ref), _normalize(f"{here}/{ref}")]
    # a path written from inside the tree (`core/internal.h`, `lower/nn.py`, `ops/`)
    candidates += [
        f"{d}/{ref.rsplit('/', 1)[1]}" for d in tracked_dirs() if d.endswith("/" + folder)
    ]
    if any(c in tracked_files() or c in tracked_dirs() for c in candidates):
        return True
    known_folder = (
        _normalize(folder) in tracked_dirs()
        or _normalize(f"{here}/{folder}") in tracked_dirs()
        or any(d.endswith("/" + folder) for d in tracked_dirs())
    )
    return False if known_folder else None


# ------------------------------------------------------------------------------ markdown


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def anchors(md_file: str) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    in_fence = False
    for line in (REPO / md_file).read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence:
            continue
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = github_slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
    return frozenset(out)


def markdown_text(md_file: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    lines, in_fence = [], False
    for n, line in enumerate((REPO / md_file).read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if not in_fence:
            lines.append((n, line))
    return lines


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
SOURCE_NAME = re.compile(r"^[\w.-]+(/[\w.-]+)*\.(c|h|inc|py|md|sh|toml|txt|cmake|js|css)$")


@pytest.mark.parametrize("md_file", doc_files())
def test_markdown_links_resolve(md_file):
    bad = []
    for n, line in markdown_text(md_file):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, fragment = target.partition("#")
            dest = _normalize(f"{Path(md_file).parent}/{path}") if path else md_file
            if dest not in tracked_files() and dest not in tracked_dirs():
                bad.append(f"{md_file}:{n}: link to {target}: no such file")
            elif fragment and dest.endswith(".md") and fragment not in anchors(dest):
                bad.append(f"{md_file}:{n}: link to {target}: no heading #{fragment} in {dest}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("md_file", doc_files())
def test_markdown_code_paths_exist(md_file):
    roots = top_level()
    bad = []
    for n, line in markdown_text(md_file):
        for span in CODE_SPAN.findall(line):
            span = span.strip()
            if " " in span or any(c in span for c in "<>*$={}[]()|,:;'\"") or "://" in span:
                continue
            first = span.split("/", 1)[0]
            if first in roots and first not in ("..",):
                ok = resolves(span, "README.md")  # root-relative
            elif SOURCE_NAME.match(span):
                ok = resolves(span, md_file)
            else:
                continue
            if ok is False or (ok is None and first in roots):
                bad.append(f"{md_file}:{n}: `{span}` does not exist")
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------------------ sources


def c_comments(text: str) -> list[tuple[int, str]]:
    out = []
    for m in re.finditer(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"", text, re.S):
        if m.group(0).startswith('"'):
            continue  # a string literal (which may contain // or /*)
        out.append((text.count("\n", 0, m.start()) + 1, m.group(0)))
    return out


def python_comments(text: str) -> list[tuple[int, str]]:
    out = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        tokens = []
    out += [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    out.append((body[0].lineno, body[0].value.value))
    return out


COMMENT_PATH = re.compile(r"(?<![\w/.*<>$-])((?:[\w.-]+/)*[\w-]+\.(?:c|h|inc|py|md))(?![\w/-])")


def comments_of(f: str) -> list[tuple[int, str]]:
    text = (REPO / f).read_text(encoding="utf-8")
    return python_comments(text) if f.endswith(".py") else c_comments(text)


def test_comment_paths_resolve():
    bad = []
    for f in source_files():
        for line, comment in comments_of(f):
            for m in COMMENT_PATH.finditer(comment):
                ref = m.group(1)
                if (
                    ref.startswith(("http", "www."))
                    or "://" in comment[max(0, m.start() - 12) : m.start()]
                ):
                    continue
                if "/" not in ref and "." in ref[: -len(Path(ref).suffix)]:
                    continue  # a dotted name such as wick.tflite.writer, not a file
                if resolves(ref, f) is False:
                    n = line + comment.count("\n", 0, m.start())
                    bad.append(f"{f}:{n}: {ref} does not exist")
    assert not bad, "\n".join(bad)


def test_nothing_cites_documents_outside_the_repository():
    notes = re.compile("|".join(re.escape(n) for n in OUTSIDE_NOTES) + r"|shared notes|shared docs")
    outside_md = re.compile(r"(?:\.\./|/work/)[\w./-]*\.md")
    this = Path(__file__).resolve().relative_to(REPO).as_posix()
    bad = []
    for f in sorted(set(source_files()) | set(doc_files())):
        if f == this:
            continue
        for n, line in enumerate((REPO / f).read_text(encoding="utf-8").splitlines(), 1):
            cited = [m.group(0) for m in notes.finditer(line)]
            cited += [
                m.group(0)
                for m in outside_md.finditer(line)
                if m.group(0).startswith("/")
                or _normalize(f"{Path(f).parent}/{m.group(0)}") == "../"
            ]
            bad += [f"{f}:{n}: cites {c!r}, which is not in the repository" for c in cited]
    assert not bad, "\n".join(bad)
