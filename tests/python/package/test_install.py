"""The package as installed: version from CMake's project(), stubs and py.typed beside the
extension, and the README's quick start, run as written."""

import os
import re
from pathlib import Path

import numpy as np

import shiftop

SOURCE = Path(os.environ.get("SHIFTOP_SOURCE_DIR", Path(__file__).resolve().parents[3]))


def test_version_is_the_cmake_project_version():
    text = (SOURCE / "CMakeLists.txt").read_text()
    version = re.search(r"project\(shiftop VERSION ([0-9.]+)", text).group(1)
    assert shiftop.__version__ == version
    if "SHIFTOP_VERSION" in os.environ:  # set by ctest from PROJECT_VERSION
        assert version == os.environ["SHIFTOP_VERSION"]


def test_stubs_are_real_and_beside_the_extension():
    package = Path(shiftop.__file__).parent
    assert (package / "py.typed").is_file()
    stub = (package / "_core.pyi").read_text()
    for name in ("class Plan", "def create(", "def read(", "def apply(", "class Error(ValueError)"):
        assert name in stub, name
    assert "-> Plan" in stub  # signatures, not a placeholder


def test_readme_quick_start_runs_as_written():
    readme = (SOURCE / "README.md").read_text()
    section = readme[readme.index("\n## Python\n"):]
    snippet = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(snippet.strip().splitlines()) == 5
    scope = {}
    exec(compile(snippet, "README.md", "exec"), scope)
    K = scope["K"]
    assert scope["d"].shape == (3, 100) and scope["m"].shape == (4, 100)
    # The quick start's d = F 1: entry (i, t) sums K[i, j, s] over j and s <= t.
    assert np.allclose(scope["d"], np.cumsum(K.sum(axis=1), axis=1), rtol=1e-12, atol=1e-12)
