#!/usr/bin/env bash
# Builds deploy/Containerfile with buildah (no container daemon) and runs
# what a cluster would run inside the images. Not part of CI: it takes tens
# of minutes (the project is compiled inside the build stage).
#
#   sudo scripts/image-check.sh [--keep] [--no-build]
#
# Steps, each named when it fails:
#   1. tools      buildah and debootstrap (installed with apt-get when missing)
#   2. base       a debian:12 image: pulled, or else made here with
#                 debootstrap (Debian's mirror is enough) and committed
#   3. build      the build stage (compiler, sources, the project installed
#                 and packaged), then the runtime stage (the package alone)
#   4. runtime    inside the runtime image: `ultima selfcheck`, a tiny loop of
#                 two generations, `ultima serve` answering a request, and a
#                 two-rank `train --nproc 2` step over Gloo
#   5. k8s        every container of deploy/k8s run inside the runtime image
#                 against one shared folder, as the manifests mount it (the
#                 init Job to its end, the long-running ones for a while)
#   6. sizes      both images' sizes
# Images are kept (ultima, ultima-build, debian:12); containers and scratch
# folders are removed unless --keep. --no-build skips steps 2 and 3 and runs
# the images built before. Storage is buildah's default
# (/var/lib/containers) with the vfs driver, which needs no kernel support.
set -euo pipefail
cd "$(dirname "$0")/.."
keep=0 build=1
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    --no-build) build=0 ;;
    *) echo "usage: image-check.sh [--keep] [--no-build]" >&2; exit 2 ;;
  esac
done

export STORAGE_DRIVER=${STORAGE_DRIVER:-vfs}
work=$(mktemp -d /var/tmp/ultima-image-check.XXXXXX)
containers=()
cleanup() {
  [ $keep = 1 ] && { echo "kept: $work and containers ${containers[*]:-}"; return; }
  for c in "${containers[@]:-}"; do [ -n "$c" ] && buildah rm "$c" > /dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

current=""
step() {
  current=$1
  echo "== $current: $2"
}
fail() {
  echo "image-check: step '$current' failed: $*" >&2
  exit 1
}
run_in() {  # run_in CONTAINER COMMAND...: a command inside, as the image's default user
  buildah run --isolation chroot "$@"
}

step tools "buildah and debootstrap"
[ "$(id -u)" = 0 ] || fail "run as root (buildah and debootstrap need it)"
if ! command -v buildah > /dev/null || ! command -v debootstrap > /dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah debootstrap > "$work/apt.log" 2>&1 ||
    fail "apt-get install buildah debootstrap: $(tail -3 "$work/apt.log")"
fi
buildah --version

if [ $build = 0 ]; then
  buildah inspect --type image localhost/ultima > /dev/null 2>&1 || { current=build; fail "--no-build: no image ultima"; }
else
step base "a debian:12 image"
if buildah inspect --type image docker.io/library/debian:12 > /dev/null 2>&1; then
  echo "debian:12 is here already"
elif timeout 120 buildah pull -q docker.io/library/debian:12 > "$work/pull.log" 2>&1; then
  echo "pulled debian:12"
else
  echo "no registry ($(tail -1 "$work/pull.log")): making debian:12 with debootstrap"
  mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 ||
    fail "debootstrap: $(tail -3 "$work/debootstrap.log")"
  # The sources of Debian's own image: the release, its updates and security.
  cat > "$work/rootfs/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar -C "$work/rootfs" -cf "$work/rootfs.tar" .
  rm -rf "$work/rootfs"
  base=$(buildah from scratch)
  containers+=("$base")
  buildah add "$base" "$work/rootfs.tar" / > /dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash "$base"
  buildah commit -q "$base" docker.io/library/debian:12 > /dev/null
  rm -f "$work/rootfs.tar"
fi

step build "the build stage, then the runtime stage"
started=$(date +%s)
# One snapshot of the tree (its files under git, committed or not) for both
# stages, so the second build reuses the first's layers even while the
# tree is being edited.
mkdir -p "$work/context"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf - | tar -C "$work/context" -xf -
buildah bud --isolation chroot --pull=false --layers -f deploy/Containerfile --target build -t ultima-build \
  "$work/context" > "$work/build.log" 2>&1 || fail "buildah bud --target build: $(tail -5 "$work/build.log")"
buildah bud --isolation chroot --pull=false --layers -f deploy/Containerfile -t ultima "$work/context" \
  > "$work/runtime.log" 2>&1 || fail "buildah bud (runtime): $(tail -5 "$work/runtime.log")"
echo "built in $(( $(date +%s) - started )) s"
fi

step runtime "selfcheck, a tiny loop, serve, two training ranks"
ctr=$(buildah from --pull=false ultima)
containers+=("$ctr")
mkdir -p "$work/data"
vol=(-v "$work/data:/data")
run_in "${vol[@]}" "$ctr" -- ultima selfcheck > "$work/selfcheck.log" 2>&1 ||
  fail "ultima selfcheck: $(tail -5 "$work/selfcheck.log")"
tail -1 "$work/selfcheck.log"
run_in "${vol[@]}" "$ctr" -- ultima loop --config /usr/share/ultima/configs/tiny.yaml --run-dir /data/tiny \
  --generations 2 > "$work/loop.log" 2>&1 || fail "tiny loop: $(tail -5 "$work/loop.log")"
[ "$(grep -c '^[0-9]' "$work/data/tiny/generations.csv")" -ge 2 ] || fail "tiny loop: fewer than 2 generations"
echo "tiny loop: $(grep -c '^[0-9]' "$work/data/tiny/generations.csv") generations"
# serve, asked over its own socket with bash's /dev/tcp (the image has no curl).
run_in "${vol[@]}" "$ctr" -- bash -c '
  ultima serve --port 18731 > /data/serve.log 2>&1 & pid=$!
  for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/18731) 2> /dev/null && break; sleep 0.2; done
  exec 3<>/dev/tcp/127.0.0.1/18731
  printf "GET /api/info HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3
  answer=$(cat <&3)
  kill $pid; wait $pid
  printf "%s\n" "$answer" | head -1
  printf "%s\n" "$answer" | grep -q "\"presets\""' > "$work/serve.txt" 2>&1 ||
  fail "serve: $(cat "$work/serve.txt") $(tail -3 "$work/data/serve.log")"
echo "serve: $(head -1 "$work/serve.txt")"
run_in "${vol[@]}" "$ctr" -- ultima train --run-dir /data/tiny --nproc 2 --steps 2 > "$work/train.log" 2>&1 ||
  fail "train --nproc 2: $(tail -5 "$work/train.log")"
grep -qi "rank" "$work/train.log" || true
echo "train --nproc 2: $(tail -1 "$work/train.log")"

step k8s "the manifests' containers inside the runtime image"
mkdir -p "$work/k8s/data" "$work/k8s/config"
# The config map holds configs/gpu.yaml (cuda, a 10x128 network); on this
# CPU image the tiny config stands in, so that in a minute the workers play
# games and the trainer trains on them.
cp configs/tiny.yaml "$work/k8s/config/config.yaml"
python3 scripts/k8s_in_image.py deploy/k8s "$ctr" "$work/k8s/data" "$work/k8s/config" 45 ||
  fail "a container of deploy/k8s failed (logs in $work/k8s/data-logs; --keep keeps them)"
[ -f "$work/k8s/data/run/models/best" ] || fail "the init Job made no run directory"
[ -n "$(find "$work/k8s/data/run/selfplay" -name '*.shard' 2> /dev/null | head -1)" ] || fail "the workers wrote no shard"
echo "k8s: $(find "$work/k8s/data/run/selfplay" -name '*.shard' | wc -l) shards from the workers," \
  "$(find "$work/k8s/data/run/models" -name 'model-*.unn' | wc -l) models from the trainer"

step sizes "the images"
buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -E 'ultima|debian' || true
echo "image-check: passed"
