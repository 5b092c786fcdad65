#!/usr/bin/env bash
# npm run test:image: builds the production image and runs it as an operator would, with Podman
# standing in for Docker (see test/image/README.md). Needs root (it installs Podman and builds
# images); called by .ci/run. Everything it changes on the host is put back when it ends.
set -euo pipefail
cd "$(dirname "$0")/../.."
say() { printf 'test:image: %s\n' "$*"; }
started=$(date +%s)
[ "$(id -u)" = 0 ] || { echo "test:image: must run as root (it installs Podman and runs rootful containers); run it in CI or with sudo" >&2; exit 2; }

# The whole run in a mount namespace of its own. Podman keeps each container's network namespace
# as a bind mount under /run/netns, which it makes a shared mount point. slirp4netns
# --enable-sandbox run as root in the same mount namespace (the App's networked steps, by the
# suite or anything else on the host) unmounts the bind mounts under a shared mount point (seen
# with slirp4netns 1.2.0: without --enable-sandbox, or with bubblewrap, they stay). Podman then
# fails on those containers ("unknown FS magic ... ef53": the bare file on the disk), aardvark-dns
# and the firewall keep stale entries, and the compose services cannot resolve each other. Here
# the mounts are nobody's peers; Podman, conmon and the containers all live in this namespace.
if [ -z "${HARNESS_IMAGE_MOUNT_NS:-}" ]; then
  HARNESS_IMAGE_MOUNT_NS=1 exec unshare --mount --propagation private -- bash "${BASH_SOURCE[0]}" "$@"
fi

# Podman, mmdebstrap and podman-compose from Debian's packages; runc for the runtime (see the conf below).
# netavark with aardvark-dns, named: Podman's network stack may be CNI's plugins instead, which
# apt may choose on its own, and without their dnsname plugin the compose services cannot
# resolve each other ("getaddrinfo ENOTFOUND redis").
packages=(podman mmdebstrap podman-compose runc uidmap netavark aardvark-dns)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

state="$(mktemp -d)"
ip_forward_before="$(cat /proc/sys/net/ipv4/ip_forward)"
tun_mode_before="$(stat -c %a /dev/net/tun)"
cleanup() {
  status=$?
  # Containers, network and volumes of this test only (by name and label), then the host's forwarding as it was.
  podman rm -f -v -t 0 --filter 'name=^harness-image' >/dev/null 2>&1 || true
  podman network rm harness-image-test_default >/dev/null 2>&1 || true
  podman volume prune -f --filter label=io.podman.compose.project=harness-image-test >/dev/null 2>&1 || true
  [ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$ip_forward_before" ] || sysctl -qw "net.ipv4.ip_forward=$ip_forward_before"
  chmod "$tun_mode_before" /dev/net/tun
  rm -rf "$state"
  say "restored ip_forward=$ip_forward_before and /dev/net/tun mode $tun_mode_before; $(( $(date +%s) - started )) s in all"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Podman's settings for this run only, never /etc. Without CAP_SYS_RESOURCE (as here), Podman's
# default limits (1048576 open files, 4194304 processes) are above what the runtime may set, and
# no container starts: open files at this shell's hard limit, processes at most 32768 (the runtime
# was refused 65536 here, with a hard limit of 96367). runc, as the issue found crun wanting here;
# netavark, so the compose services resolve each other by name.
nofile="$(ulimit -Hn)"
nproc="$(ulimit -Hu)"
[ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
cat >"$state/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "runc"
[network]
network_backend = "netavark"
CONF
export CONTAINERS_CONF="$state/containers.conf"

# Networked steps' slirp4netns opens /dev/net/tun as the App's user (--device in the compose file):
# udev makes it crw-rw-rw- on an ordinary host; this one has it 0600, so it is opened up for the run.
chmod 0666 /dev/net/tun

export HARNESS_IMAGE_CACHE="${HARNESS_IMAGE_CACHE:-/var/cache/story-harness-image}"
images="$(nice -n 19 bash test/image/base.sh)"
base="$(sed -n 's/^base //p' <<<"$images")"
redis="$(sed -n 's/^redis //p' <<<"$images")"
say "stand-ins: $base, $redis ($(( $(date +%s) - started )) s)"

image=localhost/story-harness:latest
nice -n 19 podman build --quiet --build-arg "BASE_IMAGE=$base" -t "$image" . >/dev/null
# The compose file's redis:7, served from the local store.
podman tag "$redis" docker.io/library/redis:7
size="$(podman image inspect --format '{{.Size}}' "$image")"
say "image built: $image, $((size / 1000000)) MB ($(( $(date +%s) - started )) s)"

node --import tsx test/image/checks.ts "$image"
