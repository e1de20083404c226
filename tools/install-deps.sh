#!/bin/sh
# Installs the Debian packages weft needs to build and test, only those that
# are missing. Non-interactive; uses sudo when not root. Safe to run often.
set -e
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in cmake ninja-build gcc clang clang-format make libexpat1-dev libclang-rt-14-dev openmpi-bin libopenmpi-dev libhwloc-dev libglpk-dev libgmp-dev gfortran pkg-config iproute2 python3 python3-mpi4py python3-numpy; do
  have_pkg "$p" || need="$need $p"
done
[ -z "$need" ] && exit 0
echo "weft: installing missing Debian packages:$need"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends $need
