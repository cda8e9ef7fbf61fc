"""The documents stay a map that matches the tree (issue 29, section 6).

* docs/architecture.md has at most 3,000 words (whitespace-separated, code blocks included).
* Every repository path a document in docs/ (or README.md, tests/README.md) names exists: a
  backticked path that starts with a top-level folder of the repository (`src/btt/plan.cpp`,
  `include/shiftop/core/`, `src/circ/cuda/{setup.cu,apply.cu}`, `src/models/ct2d*.cpp`; tests/
  README.md's `python/...` relative to tests/), and every relative Markdown link target. A
  checklist's files that do not exist yet are declared: `<!-- new paths: src/backend/hip/ -->`.
* Every public header that declares an enum's name table is listed in the map's "Enum names".
* Every link to a section (`btt.md#the-life-of-a-plan`) names a heading of that document, and
  every comment in the code that points to a section by its title (`docs/btt.md, "The life of a
  plan"`) names a heading of that document: section numbers rot, titles are checked here.

Runs under pytest or alone (`python3 tests/docs/test_docs.py`, as ctest runs it); the root is
SHIFTOP_SOURCE_DIR or the checkout this file sits in.
"""

import glob
import os
import re
import sys
from pathlib import Path

ROOT = Path(os.environ.get("SHIFTOP_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MAP = ROOT / "docs" / "architecture.md"
MAX_MAP_WORDS = 3000

# Top-level folders whose paths a document may name.
TOP = ("src", "include", "docs", "tests", "python", "apps", "scripts", "bench", "examples", "cmake")
PATH_IN_CODE = re.compile(r"(?<![\w./-])((?:%s)/[\w./{},*+<>-]*)" % "|".join(TOP))
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
# A comment's pointer to a section by title: docs/<name>.md, "<Title>" (the title may wrap onto
# the next comment line; quotes straight or typographic).
SECTION_REF = re.compile(r"docs/([\w-]+\.md)`?[,\s/#*]*(?:section\s+)?\"([^\"]+)\"", re.S)
# A pointer by number (docs/architecture.md, section 17; docs/architecture.md 17): refused.
SECTION_NUMBER = re.compile(r"docs/[\w-]+\.md`?[,\s/#*]*(?:sections?\s+)?\d+")


def documents():
    return sorted(ROOT.glob("docs/*.md")) + [ROOT / "README.md", ROOT / "tests" / "README.md"]


def words(path):
    return len(path.read_text(encoding="utf-8").split())


def expand_braces(path):
    """src/a/{b,c}.cpp -> [src/a/b.cpp, src/a/c.cpp] (nested braces expanded one at a time)."""
    match = re.search(r"\{([^{}]*)\}", path)
    if match is None:
        return [path]
    out = []
    for part in match.group(1).split(","):
        out += expand_braces(path[: match.start()] + part + path[match.end():])
    return out


# A document may name paths a checklist asks for that do not exist yet (a new backend's folder):
# it declares them, as prefixes, in a comment `<!-- new paths: src/backend/hip/ tests/... -->`.
NEW_PATHS = re.compile(r"<!--\s*new paths:(.*?)-->", re.S)


def exists(path, base=ROOT):
    """path exists in the repository, or (a document's relative path) next to the document."""
    path = path.rstrip(".,;:")
    for folder in (ROOT, base):
        if "*" in path:
            if glob.glob(str(folder / path)):
                return True
        elif (folder / path).exists():
            return True
    return False


def named_paths(text):
    """The repository paths a Markdown text names in code spans (fenced blocks excluded)."""
    text = FENCE.sub("", text)
    found = []
    for span in CODE_SPAN.findall(text):
        for raw in PATH_IN_CODE.findall(span):
            raw = raw.rstrip(".,;:")
            if "<" in raw or raw.endswith("/...") or "..." in raw:
                continue  # a pattern (src/<family>/), not a path
            found += expand_braces(raw)
    return found


def slug(title):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    title = re.sub(r"`", "", title.strip().lower())
    title = re.sub(r"[^\w\- ]", "", title)
    return title.replace(" ", "-")


def headings(path):
    return [h.strip().replace("`", "") for h in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8")))]


def missing_paths(doc):
    text = doc.read_text(encoding="utf-8")
    declared = [p for block in NEW_PATHS.findall(text) for p in block.split()]
    missing = [p for p in named_paths(text)
               if not exists(p, doc.parent) and not any(p.startswith(d) for d in declared)]
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        file_part = target.split("#", 1)[0]
        if file_part and not (doc.parent / file_part).exists():
            missing.append(target)
    return sorted(set(missing))


def broken_anchors(doc):
    broken = []
    for target in LINK.findall(FENCE.sub("", doc.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target) or "#" not in target:
            continue
        file_part, anchor = target.split("#", 1)
        linked = (doc.parent / file_part) if file_part else doc
        if linked.suffix == ".md" and linked.exists():
            if anchor not in {slug(h) for h in headings(linked)}:
                broken.append(target)
    return broken


def code_files():
    for folder in ("include", "src", "apps", "python", "tests", "bench", "scripts", "examples"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in {".hpp", ".cpp", ".cu", ".cuh", ".h", ".py",
                                                  ".txt", ".cmake", ".sh", ""}:
                yield path
    for path in (ROOT / "CMakeLists.txt", ROOT / "README.md"):
        yield path


def broken_section_references():
    broken = []
    for path in code_files():
        if path.resolve() == Path(__file__).resolve():
            continue  # its own examples
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if "docs/" not in text:
            continue
        for number_ref in SECTION_NUMBER.findall(text):
            broken.append(f"{path.relative_to(ROOT)}: {' '.join(number_ref.split())} "
                          "(name the section by its title)")
        for doc_name, title in SECTION_REF.findall(text):
            # Join a title wrapped over comment lines: drop the next line's comment marker.
            title = " ".join(re.sub(r"^\s*(//+|#+|\*)\s?", "", line) for line in title.splitlines())
            doc = ROOT / "docs" / doc_name
            titles = {t.lower() for t in headings(doc)} if doc.exists() else set()
            if " ".join(title.split()).lower() not in titles:
                broken.append(f"{path.relative_to(ROOT)}: docs/{doc_name}, \"{title}\"")
    return broken


def test_map_is_short():
    count = words(MAP)
    assert count <= MAX_MAP_WORDS, (
        f"docs/architecture.md has {count} words: the map holds at most {MAX_MAP_WORDS}; move "
        "design notes to the family's own document (docs/<family>.md)")


def test_named_paths_exist():
    problems = {str(doc.relative_to(ROOT)): missing_paths(doc) for doc in documents()}
    problems = {doc: paths for doc, paths in problems.items() if paths}
    assert not problems, "paths named in the documents that do not exist:\n" + "\n".join(
        f"  {doc}: {path}" for doc, paths in problems.items() for path in paths)


def test_section_links_resolve():
    broken = [f"{doc.relative_to(ROOT)}: {t}" for doc in documents() for t in broken_anchors(doc)]
    assert not broken, "links to sections that do not exist:\n  " + "\n  ".join(broken)


def test_comments_name_existing_sections():
    broken = broken_section_references()
    assert not broken, ("comments that point to a section title no document has:\n  " +
                        "\n  ".join(broken))


def test_enum_tables_are_mapped():
    """Every public header that declares an enum's name table is in the map's table of them."""
    text = MAP.read_text(encoding="utf-8")
    unlisted = [str(h.relative_to(ROOT)) for h in sorted((ROOT / "include").rglob("*.hpp"))
                if h.name != "enum_names.hpp" and "EnumNames<" in h.read_text(encoding="utf-8")
                and f"`{h.relative_to(ROOT)}`" not in text]
    assert not unlisted, ("headers with EnumNames tables missing from docs/architecture.md, "
                          "\"Enum names\": " + ", ".join(unlisted))


def test_checks_can_fail():
    """The checks themselves: a stale path, a bad anchor and a long text are found."""
    assert named_paths("`src/no_such_folder/x.cpp` and `src/btt/{plan.cpp,nope.cpp}`") == [
        "src/no_such_folder/x.cpp", "src/btt/plan.cpp", "src/btt/nope.cpp"]
    assert not exists("src/btt/nope.cpp")
    assert named_paths("`src/<family>/` and `shiftop::btt::Plan`") == []
    assert not exists("tests/python/no_such_test.py")
    assert slug("The life of a call: create once, apply many") == (
        "the-life-of-a-call-create-once-apply-many")
    assert SECTION_REF.findall('see docs/btt.md, "The life of a plan".') == [
        ("btt.md", "The life of a plan")]
    assert SECTION_NUMBER.findall("(docs/architecture.md, section 17)") == [
        "docs/architecture.md, section 17"]
    assert len(SECTION_NUMBER.findall("(`docs/architecture.md`,\n// section 14)")) == 1
    assert SECTION_NUMBER.findall("docs/architecture.md describes the 2 layers") == []


if __name__ == "__main__":
    failed = 0
    for name, check in sorted(globals().items()):
        if name.startswith("test_") and callable(check):
            try:
                check()
                print(f"ok    {name}")
            except AssertionError as error:
                failed += 1
                print(f"FAIL  {name}: {error}")
    sys.exit(1 if failed else 0)
