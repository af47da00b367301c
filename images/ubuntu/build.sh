#!/bin/sh
# Builds the local image's root filesystem into $1 (default .images/ubuntu) from Debian's packages with mmdebstrap:
# where Docker Hub cannot be reached, this stands in for AppVeyor's Ubuntu images (docs/executors.md). Run as root
# (make image). The finished tree is owned by the uids the container executor maps its containers' users to
# (root inside is 100000 outside), so a build's root is nobody of this machine.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
target=${1:-.images/ubuntu}
suite=${CONVEYOR_IMAGE_SUITE:-bookworm}
mirror=${CONVEYOR_IMAGE_MIRROR:-http://deb.debian.org/debian}
shift_by=${CONVEYOR_IMAGE_UID_SHIFT:-100000}
packages=$(grep -v '^#' "$here/packages" | grep . | paste -sd, -)
started=$(date +%s)
rm -rf "$target.new"
mkdir -p "$(dirname "$target")"
# only root (podman) reads it: a tree another user could write to would change every job's image
chmod 0700 "$(dirname "$target")"
# the apt lists stay (skip=cleanup/apt/lists): `sudo apt-get install -y PKG` works as it does on AppVeyor's images
# This machine's npm and pip registries are the image's (section "The local image" of docs/executors.md): Node.js comes
# from the npm registry (node_versions.py), and a job's `npm install` and `pip install` ask what this machine asks.
npm_registry=$(npm config get registry 2>/dev/null || true)
export CONVEYOR_NPM_REGISTRY="${CONVEYOR_NPM_REGISTRY:-${npm_registry:-https://registry.npmjs.org/}}"
pip_index=$(python3 -m pip config get global.index-url 2>/dev/null || true)
case $pip_index in http://* | https://*) ;; *) pip_index=https://pypi.org/simple ;; esac
export CONVEYOR_PIP_INDEX="${CONVEYOR_PIP_INDEX:-$pip_index}"
# every job reads them and the image goes to ECR: a URL with a user name or token is refused now, not after the build
python3 "$here/registry_settings.py" --check
# dpkg writes without an fsync per file (force-unsafe-io): a tree whose build fails is thrown away anyway, and its
# 5 GB unpack in a fraction of the time.
# The certificate authorities this machine added (a company's TLS proxy, say) are the image's too, so that a build's
# package installs trust what this machine's do; they are public certificates, nothing secret (*.crt files only, as
# update-ca-certificates reads: not a key or anything else kept beside them, nor a link to one).
mmdebstrap --variant=minbase --include="$packages" --skip=cleanup/apt/lists --dpkgopt=force-unsafe-io \
	--customize-hook="python3 '$here/node_versions.py' \"\$1\"" \
	--customize-hook="mkdir -p \"\$1/opt/conveyor\" \"\$1/etc/conveyor\" && cp '$here/services.sh' \"\$1/opt/conveyor/\" && cp '$here/session.sh' \"\$1/etc/conveyor/\" && cp '$here/nvm.sh' \"\$1/opt/nvm/\"" \
	--customize-hook="python3 '$here/registry_settings.py' \"\$1\"" \
	--customize-hook='if [ -d /usr/local/share/ca-certificates ]; then (cd /usr/local/share/ca-certificates && find . -type f -name \*.crt -exec cp --parents {} "$1/usr/local/share/ca-certificates/" \;) && chroot "$1" update-ca-certificates >/dev/null; fi' \
	--customize-hook="chroot \"\$1\" sh -s < '$here/setup.sh'" \
	"$suite" "$target.new" "$mirror"
python3 "$here/shift_ids.py" "$target.new" "$shift_by"
rm -rf "$target"
mv "$target.new" "$target"
# how long it took, for BENCHMARKS.md (bench/image_tools.py)
echo "$(($(date +%s) - started)) seconds on $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$target.build-seconds"
