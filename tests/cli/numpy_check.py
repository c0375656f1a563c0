#!/usr/bin/env python3
"""NumPy and catalyst-remote agree on .npy files.

NumPy writes every dtype the C ABI carries, in C and Fortran order, with
headers of versions 1.0, 2.0 and 3.0; catalyst-remote run passes each through
a kernel that copies its input, and NumPy reads what the tool wrote back: the
same dtype, shape and values, in C order. Then the README's example, with
NumPy's files, as a reader would run it.

usage: numpy_check.py CATALYST_REMOTE EXECUTOR KERNEL_DIR
Exits 77 (skipped) where NumPy is missing.
"""

import os
import re
import subprocess
import sys
import tempfile
import threading

try:
    import numpy as np
except ImportError:
    print("numpy_check: NumPy is not installed (tools/bootstrap installs python3-numpy); skipped")
    sys.exit(77)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


class Executor:
    """An executor on a port the kernel picks, stopped at the end."""

    def __init__(self, path):
        self.proc = subprocess.Popen([path, "--bind", "127.0.0.1:0"], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        found = []

        def read():
            for line in self.proc.stdout:
                m = re.search(r"[Ll]istening on (\S+:\d+)", line)
                if m:
                    found.append(m.group(1))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(10)
        if not found:
            self.stop()
            sys.exit("numpy_check: the executor did not say where it listens within 10 s")
        self.address = found[0]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def random_array(dtype, shape, rng):
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def run(cli, args):
    r = subprocess.run([cli] + args, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f"numpy_check: catalyst-remote {' '.join(args)} failed ({r.returncode}):\n"
                 f"{r.stdout}{r.stderr}")
    return r.stdout


def check_dtypes(cli, address, kernel_dir, work):
    rng = np.random.default_rng(12)
    copy = os.path.join(kernel_dir, "copy.o")
    cases = 0
    for dtype in DTYPES:
        for fortran in (False, True):
            for version in ((1, 0), (2, 0), (3, 0)):
                a = random_array(dtype, (3, 4, 5), rng)
                if fortran:
                    a = np.asfortranarray(a)
                path = os.path.join(work, "in.npy")
                with open(path, "wb") as f:
                    np.lib.format.write_array(f, a, version=version)
                entry = f"copy_r3_e{a.dtype.itemsize}"
                run(cli, ["run", address, copy, entry, "--in", path,
                          "--out", f"{dtype}:3", "--out-dir", work])
                out_path = os.path.join(work, "out0.npy")
                with open(out_path, "rb") as f:
                    assert np.lib.format.read_magic(f) == (1, 0), "the tool writes version 1.0"
                out = np.load(out_path, allow_pickle=False)
                what = f"{dtype}, {'Fortran' if fortran else 'C'} order, version {version}"
                assert out.dtype == a.dtype, f"{what}: dtype {out.dtype}"
                assert out.shape == a.shape, f"{what}: shape {out.shape}"
                assert out.flags.c_contiguous, f"{what}: not in C order"
                # Bytes, not values: NaN payloads must survive too.
                assert out.tobytes() == np.ascontiguousarray(a).tobytes(), f"{what}: values differ"
                cases += 1
    return cases


def check_readme(cli, address, kernel_dir, work):
    os.chdir(work)
    np.save("a.npy", np.arange(6.0).reshape(2, 3))
    np.save("b.npy", np.asfortranarray(10 * np.ones((2, 3))))
    run(cli, ["run", address, os.path.join(kernel_dir, "add.o"), "add",
              "--in", "a.npy", "--in", "b.npy", "--out", "float64:2"])
    out = np.load("out0.npy")
    assert (out == np.load("a.npy") + np.load("b.npy")).all(), f"the example gave {out}"


def main():
    cli, executor_path, kernel_dir = sys.argv[1:4]
    executor = Executor(executor_path)
    try:
        with tempfile.TemporaryDirectory() as work:
            cases = check_dtypes(cli, executor.address, kernel_dir, work)
            check_readme(cli, executor.address, kernel_dir, work)
    finally:
        executor.stop()
    print(f"numpy_check: {cases} NumPy files through catalyst-remote and back, and the README's "
          "example: all agree")


if __name__ == "__main__":
    main()
