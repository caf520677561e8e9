#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test QLA. Idempotent.
set -euo pipefail

need_pkgs=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
           ccache ninja-build cmake libfmt-dev libzstd-dev zlib1g-dev python3)
backport_pkgs=(libcatch2-dev)

missing=()
for p in "${need_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
catch2_ok=0
if dpkg-query -W -f='${Version}' libcatch2-dev 2>/dev/null | grep -q '^3\.'; then catch2_ok=1; fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if [ ${#missing[@]} -gt 0 ] || [ $catch2_ok -eq 0 ]; then
  if [ $catch2_ok -eq 0 ] && ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" | $SUDO tee /etc/apt/sources.list.d/qla-backports.list >/dev/null
  fi
  echo "setup: installing ${missing[*]} ${backport_pkgs[*]}"
  $SUDO apt-get update -q
  export DEBIAN_FRONTEND=noninteractive
  [ ${#missing[@]} -eq 0 ] || $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  [ $catch2_ok -eq 1 ] || $SUDO apt-get install -y -q --no-install-recommends -t bookworm-backports libcatch2-dev
fi

if [ ! -x /usr/local/cuda/bin/ptxas ] || [ ! -f /usr/local/cuda/include/cuda.h ] || \
   [ ! -e /usr/local/cuda/lib64/libnvJitLink_static.a ] && [ ! -e /usr/local/cuda/lib64/libnvJitLink.so ]; then
  echo "setup: the CUDA toolkit (13.0) is missing at /usr/local/cuda: QLA needs its headers, ptxas, NVRTC and nvJitLink." >&2
  echo "       Install the CUDA 13.0 toolkit there (no driver is needed to build or to run the CPU tests)." >&2
  exit 1
fi
echo "setup: ok"
