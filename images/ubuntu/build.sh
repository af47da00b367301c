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
rm -rf "$target.new"
mkdir -p "$(dirname "$target")"
# only root (podman) reads it: a tree another user could write to would change every job's image
chmod 0700 "$(dirname "$target")"
# the apt lists stay (skip=cleanup/apt/lists): `sudo apt-get install -y PKG` works as it does on AppVeyor's images
# The certificate authorities this machine added (a company's TLS proxy, say) are the image's too, so that a build's
# package installs trust what this machine's do; they are public certificates, nothing secret.
mmdebstrap --variant=minbase --include="$packages" --skip=cleanup/apt/lists \
	--customize-hook='if [ -d /usr/local/share/ca-certificates ]; then cp -R /usr/local/share/ca-certificates/. "$1/usr/local/share/ca-certificates/" && chroot "$1" update-ca-certificates >/dev/null; fi' \
	--customize-hook="chroot \"\$1\" sh -s < '$here/setup.sh'" \
	"$suite" "$target.new" "$mirror"
python3 "$here/shift_ids.py" "$target.new" "$shift_by"
rm -rf "$target"
mv "$target.new" "$target"
