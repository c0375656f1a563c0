"""The README's Python example runs as printed and prints what it says."""

import os
import re
import shutil
import subprocess
import sys

import numpy as np


def readme_example():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "README.md")) as f:
        text = f.read()
    section = text[text.index("\n## Python\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example(kernels, executor_bin, tmp_path):
    shutil.copy(os.path.join(kernels, "add.o"), tmp_path / "add.o")
    env = {**os.environ, "CATALYST_REMOTE_EXECUTOR": executor_bin}
    run = subprocess.run([sys.executable, "-c", readme_example()], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    a = np.arange(6.0).reshape(2, 3)
    assert run.stdout.strip() == str(a + a[:, ::-1])
