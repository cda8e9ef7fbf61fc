"""The package itself: version from CMake's project(), importable metadata."""

import os
import re
from pathlib import Path

import shiftop


def test_version_is_the_cmake_project_version():
    source = Path(os.environ["SHIFTOP_SOURCE_DIR"]) / "CMakeLists.txt"
    version = re.search(r"project\(shiftop VERSION ([0-9.]+)", source.read_text()).group(1)
    assert shiftop.__version__ == version == os.environ["SHIFTOP_VERSION"]
