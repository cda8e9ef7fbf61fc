"""`shiftop` when the disk fills up while writing (simulated with a file-size limit): one error
line, exit status 1 (not a crash), and nothing left behind: no output and no temporary file."""
import os
import resource
import signal
import subprocess

import numpy as np
import pytest

SHIFTOP = os.environ.get("SHIFTOP_BIN", "shiftop")
LIMIT = 64 * 1024


def limited():
    """In the child: writes beyond LIMIT bytes fail with EFBIG instead of killing the process."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


@pytest.mark.parametrize("output", ["F.h5", "F_dir", "F.npy", "d.h5"])
def test_full_disk_is_an_error_not_a_crash(tmp_path, output):
    rng = np.random.default_rng(3)
    np.save(tmp_path / "K.npy", rng.standard_normal((4, 64, 512)))
    np.save(tmp_path / "m.npy", rng.standard_normal((64, 512)))
    before = sorted(p.name for p in tmp_path.iterdir())
    if output == "d.h5":
        cmd = ["matvec", "--operator", tmp_path / "K.npy", "--input", tmp_path / "m.npy",
               "--output", tmp_path / output, "--op", "FadjF"]
    else:
        cmd = ["convert", tmp_path / "K.npy", tmp_path / output]
    out = subprocess.run([SHIFTOP, *map(str, cmd)], capture_output=True, text=True,
                         preexec_fn=limited)
    assert out.returncode == 1, out
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1 and str(tmp_path / output) in out.stderr
    assert "disk full?" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
