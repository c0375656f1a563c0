#!/usr/bin/env bash
# The Debian package as a user meets it: built by CPack from this build
# tree, installed with dpkg, used from C (a program built against it with
# find_package(CatalystRemote)) and from Python (the installed package
# starting the installed executor), then purged, leaving no file behind.
#
#   package_test.sh BUILD_DIR ADD_OBJECT
#
# Exits 77 (skipped, saying why) where it cannot install packages: not
# root, no dpkg, or a catalyst-remote package already installed (which it
# would replace).
set -euo pipefail
build=$(cd "$1" && pwd)
add_object=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

skip() { echo "package_test: skipped: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "installing a package needs root"
command -v dpkg >/dev/null || skip "no dpkg here"
if dpkg-query -W -f='${Status}' catalyst-remote 2>/dev/null | grep -q "installed"; then
  skip "a catalyst-remote package is installed on this machine; the test would replace it"
fi

work=$(mktemp -d)
executor_pid=
cleanup() {
  [[ -n $executor_pid ]] && kill "$executor_pid" 2>/dev/null && wait "$executor_pid" 2>/dev/null
  dpkg --purge catalyst-remote >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

step() { echo "package_test: $*"; }

step "building the package (cpack -G DEB)"
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" >cpack.log 2>&1) ||
  { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/catalyst-remote_*.deb)
step "installing $(basename "$deb")"
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; exit 1; }
dpkg -L catalyst-remote >"$work/files"

for f in /usr/bin/catalyst-remote-executor /usr/bin/catalyst-remote \
  /usr/include/catalyst/remote/RemoteCAPI.h /usr/lib/cmake/CatalystRemote/CatalystRemoteConfig.cmake; do
  [[ -e $f ]] || { echo "package_test: the package lacks $f"; exit 1; }
done
version=$(/usr/bin/catalyst-remote-executor --version)
step "$version"

step "starting the installed executor"
/usr/bin/catalyst-remote-executor --bind 127.0.0.1:0 >"$work/executor.out" 2>"$work/executor.err" &
executor_pid=$!
address=
for _ in $(seq 300); do
  address=$(sed -n 's/^Listening on //p' "$work/executor.out")
  [[ -n $address ]] && break
  kill -0 "$executor_pid" 2>/dev/null || { cat "$work/executor.err"; exit 1; }
  sleep 0.05
done
[[ -n $address ]] || { echo "package_test: the executor did not listen within 15 s"; exit 1; }

step "building a C program with find_package(CatalystRemote)"
# Only what a user's machine has: no path into this build tree.
cmake -S "$here/consumer" -B "$work/consumer" -G Ninja >"$work/consumer.log" 2>&1 &&
  cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log"; exit 1; }
"$work/consumer/consumer" "$address" "$add_object"

step "launching from the installed Python package"
# The interpreter a user runs, with none of the build tree on its path;
# bytecode is written, as for a user, and must not outlive the package.
(cd "$work" && env -u PYTHONPATH -u PYTHONDONTWRITEBYTECODE -u CATALYST_REMOTE_EXECUTOR /usr/bin/python3 - "$add_object" "$version" <<'PY'
import os, sys
import numpy as np
import catalyst_remote as cr
from catalyst_remote.executor import default_executor_bin
add, version = sys.argv[1], sys.argv[2]
assert cr.__file__.startswith("/usr/lib/python3/dist-packages/"), cr.__file__
assert version.startswith(f"catalyst-remote-executor {cr.__version__},"), (version, cr.__version__)
assert default_executor_bin() == "/usr/bin/catalyst-remote-executor", default_executor_bin()
a = np.arange(6.0).reshape(2, 3)
with cr.Executor() as ex, cr.Session(ex.address) as s:
    s.send_binary(add)
    (total,) = s.launch("_catalyst_pyface_add", os.path.basename(add), a, a[:, ::-1],
                        outputs=[("float64", 2)])
assert np.array_equal(total, a + a[:, ::-1]), total
print("package_test: Python's sum matches")
PY
)
kill "$executor_pid" && wait "$executor_pid" 2>/dev/null || true
executor_pid=

step "purging the package"
dpkg --purge catalyst-remote >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; exit 1; }
left=0
while read -r f; do
  # Directories the package shares with the system (/usr, /usr/bin) stay.
  if [[ -e $f && ! -d $f ]] || [[ -d $f && $f == */catalyst* ]] || [[ -d $f && $f == */CatalystRemote ]]; then
    echo "package_test: left behind after purge: $f"
    left=1
  fi
done <"$work/files"
[[ $left == 0 ]] || exit 1
step "installed, used from C and Python, purged without leftovers"
