#!/usr/bin/env bash
# The project's Debian libraries for a machine that has a compiler, CMake,
# ninja and a pip `torch` but none of them and no network (a GPU machine
# lent for the GPU check).
#
#   scripts/gpu-deps.sh fetch [DIR]     here, with Debian's mirror: the .deb
#                                       files into DIR (default deps/debs,
#                                       ignored by git; carry it along)
#   source scripts/gpu-deps.sh unpack ROOT [DIR]
#                                       there: unpacks them into ROOT (with
#                                       dpkg-deb, or ar and tar where there
#                                       is no dpkg) and exports what CMake,
#                                       pkg-config and the programs need to
#                                       find them: ULTIMA_DEPS_PREFIX (add it
#                                       to CMAKE_PREFIX_PATH),
#                                       PKG_CONFIG_PATH,
#                                       PKG_CONFIG_SYSROOT_DIR,
#                                       PKG_CONFIG (pkgconf from the bundle
#                                       when there is no pkg-config),
#                                       LD_LIBRARY_PATH, CPATH
# scripts/gpu-check.sh sources `unpack` itself when deps/debs is there.
# The packages are Debian 12's (glibc 2.36): the machine needs a glibc at
# least that new.

ULTIMA_GPU_DEBS=(
  # headers and CMake packages
  libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libeigen3-dev
  libgtest-dev libgmock-dev libzstd-dev libcpp-httplib-dev libsqlite3-dev
  # what cpp-httplib's pkg-config file asks for (headers of OpenSSL, zlib, Brotli)
  libssl-dev zlib1g-dev libbrotli-dev
  # their shared libraries (OpenSSL's and zlib's too: the -dev packages'
  # libssl.so and libz.so point at them)
  libspdlog1.10 libfmt9 libyaml-cpp0.7 libzstd1 libcpp-httplib0.11 libbrotli1 libssl3 zlib1g libsqlite3-0
  # pkg-config itself
  pkgconf pkgconf-bin libpkgconf3
)

ultima_gpu_deps_fetch() {
  local dir=${1:-deps/debs}
  mkdir -p "$dir"
  (cd "$dir" && apt-get download "${ULTIMA_GPU_DEBS[@]}") || return 1
  echo "gpu-deps: $(ls "$dir"/*.deb | wc -l) packages, $(du -sh "$dir" | cut -f1), in $dir"
}

ultima_gpu_deps_unpack() {
  local root=${1:?usage: source gpu-deps.sh unpack ROOT [DIR]} dir=${2:-deps/debs}
  [ -n "$(ls "$dir"/*.deb 2> /dev/null)" ] || { echo "gpu-deps: no .deb files in $dir" >&2; return 1; }
  mkdir -p "$root"
  root=$(cd "$root" && pwd)
  local deb
  for deb in "$dir"/*.deb; do
    if command -v dpkg-deb > /dev/null; then
      dpkg-deb -x "$deb" "$root" || return 1
    else
      local scratch abs
      scratch=$(mktemp -d)
      abs="$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")"
      (cd "$scratch" && ar x "$abs" && tar -C "$root" -xf data.tar.*) ||
        { rm -rf "$scratch"; echo "gpu-deps: cannot unpack $deb" >&2; return 1; }
      rm -rf "$scratch"
    fi
  done
  local arch
  arch=$(ls "$root/usr/lib" | grep -- '-linux-gnu$' | head -n1)
  export ULTIMA_DEPS_PREFIX="$root/usr"
  export PKG_CONFIG_PATH="$root/usr/lib/$arch/pkgconfig:$root/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  # The .pc files say prefix=/usr: the sysroot puts ROOT in front of their paths.
  export PKG_CONFIG_SYSROOT_DIR="$root"
  export LD_LIBRARY_PATH="$root/usr/lib/$arch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # Debian's multiarch headers (openssl/opensslconf.h), which a Debian
  # compiler finds in /usr/include/ARCH by itself.
  export CPATH="$root/usr/include/$arch${CPATH:+:$CPATH}"
  if ! command -v pkg-config > /dev/null; then export PKG_CONFIG="$root/usr/bin/pkgconf"; fi
  echo "gpu-deps: unpacked $(ls "$dir"/*.deb | wc -l) packages into $root"
}

case "${1:-}" in
  fetch) shift; ultima_gpu_deps_fetch "$@" ;;
  unpack) shift; ultima_gpu_deps_unpack "$@" ;;
  *) echo "usage: gpu-deps.sh fetch [DIR] | source gpu-deps.sh unpack ROOT [DIR]" >&2; return 2 2> /dev/null || exit 2 ;;
esac
