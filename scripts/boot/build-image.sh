#!/usr/bin/env bash
# Builds, once, the Debian 12 (bookworm) VM image of the boot test (`npm run test:boot`) and prints
# the directory that holds it. The image is cached under a key that hashes everything that goes
# into it (this script, scripts/boot/image/, the stand-in host list), so a second run only prints.
#
# Usage: scripts/boot/build-image.sh        (as root: mmdebstrap and mkfs write root-owned files)
#
# The directory holds:
#   root.img          raw disk, one file system without partition table (XFS, as on Amazon Linux 2023;
#                     ext4 when this mkfs.xfs cannot fill one from a prototype file: see fs-type)
#   fs-type           xfs or ext4
#   vmlinuz, initrd.img   the image's kernel (linux-image-cloud-amd64, 6.1) and initramfs
#   ca.pem, ca.key    the test CA the image trusts; the test signs its stand-ins' certificates with it
#   id_ed25519(.pub)  the test's ssh key, authorized for root in the image (control channel only)
#   build.log         what the build printed, with timings
#
# Environment: CRM_BOOT_CACHE (default: ${CRM_TOOLS_DIR:-$HOME/.cache/crm-host-tools}/boot-image),
#              CRM_BOOT_MIRROR (default: http://deb.debian.org/debian)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE="${CRM_BOOT_CACHE:-${CRM_TOOLS_DIR:-$HOME/.cache/crm-host-tools}/boot-image}"
MIRROR="${CRM_BOOT_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
DISK_SIZE=6G
# What the provisioning script runs once its downloads are done (the dnf shim maps Amazon Linux's
# package names onto these), what cloud-init's default modules need for a clean status
# (cloud-guest-utils: growpart, e2fsprogs/xfsprogs: resizefs, locales: locale), and the test's
# control channel (openssh-server). python3 runs cloud-init and the metadata stand-in. awscli: the
# AWS CLI v2 the parameter-store mode reads its secrets with (Amazon Linux 2023 ships one), and
# python3-certifi, through which Debian's build trusts the system's CAs (the test CA among them).
# dbus: the system bus that `systemd-run --wait` (the ops command's transient unit) talks through;
# Amazon Linux 2023 has dbus-broker.
PACKAGES=(
  systemd-sysv linux-image-cloud-amd64 initramfs-tools cloud-init cloud-guest-utils locales
  ifupdown isc-dhcp-client iproute2 openssh-server ca-certificates sudo procps python3
  mariadb-server mariadb-client git curl nftables xfsprogs e2fsprogs build-essential awscli python3-certifi dbus
)

log() { printf '[build-image] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

key=$( { cat "$0" "$HERE/stand-in-hosts.txt"; printf '%s\n' "$MIRROR" "${PACKAGES[@]}";
         (cd "$HERE/image" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); } \
       | sha256sum | cut -c1-16)
dir="$CACHE/$key"
if [[ -f $dir/.complete ]]; then
  printf '%s\n' "$dir"
  exit 0
fi

((EUID == 0)) || die "building the image needs root (mmdebstrap, mkfs); run the boot test as root"
for c in mmdebstrap mkfs.xfs mkfs.ext4 openssl ssh-keygen python3; do
  command -v "$c" >/dev/null 2>&1 || die "$c is missing (scripts/ci/install-tools.sh boot installs it)"
done

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
if [[ -f $dir/.complete ]]; then  # built by a concurrent run while this one waited
  printf '%s\n' "$dir"
  exit 0
fi

build="$CACHE/.build-$key"
rm -rf "$build"
mkdir -p "$build"
# The chroot steps write only to build.log, which goes with the build directory: a failure shows its tail first.
remove_build() {
  local status=$?
  if ((status != 0)) && [[ -s $build/build.log ]]; then
    log "failed (exit $status); the end of build.log:"
    tail -n 30 "$build/build.log" >&2
  fi
  rm -rf "$build"
}
trap remove_build EXIT
# A command inside the image, with an environment of its own: the caller's (TMPDIR above all, which the
# tests point at a directory of theirs) names paths that do not exist in there.
in_image() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
root="$build/rootfs"
start=$SECONDS

log "mmdebstrap $SUITE (${#PACKAGES[@]} packages) into $root"
mmdebstrap --quiet --variant=apt --include="$(IFS=,; echo "${PACKAGES[*]}")" \
  "$SUITE" "$root" "$MIRROR" >"$build/build.log" 2>&1 \
  || { tail -n 30 "$build/build.log" >&2; die "mmdebstrap failed"; }
log "mmdebstrap: $((SECONDS - start)) s"

# Test CA and ssh key: made here so that they belong to this image and are cached with it.
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=CRM boot test CA" \
  -keyout "$build/ca.key" -out "$build/ca.pem" >>"$build/build.log" 2>&1
ssh-keygen -q -t ed25519 -N '' -C crm-boot-test -f "$build/id_ed25519"

cp -a "$HERE/image/." "$root/"
install -m 644 "$build/ca.pem" "$root/usr/local/share/ca-certificates/crm-boot-test-ca.crt"
in_image update-ca-certificates >>"$build/build.log" 2>&1
# EC2 Instance Connect's user, as on Amazon Linux 2023: its AuthorizedKeysCommand reads the metadata service as it.
in_image useradd --system --no-create-home --shell /sbin/nologin ec2-instance-connect
install -d -m 700 "$root/root/.ssh"
install -m 600 "$build/id_ed25519.pub" "$root/root/.ssh/authorized_keys"
{
  printf '127.0.0.1 localhost\n'
  printf '10.0.2.100 %s\n' "$(grep -v '^#' "$HERE/stand-in-hosts.txt" | xargs)"
} >"$root/etc/hosts"
# cloud-init's locale module sets en_US.UTF-8 (as on Amazon Linux 2023): it must exist.
sed -i 's/^# *en_US.UTF-8 UTF-8/en_US.UTF-8 UTF-8/' "$root/etc/locale.gen"
in_image locale-gen >>"$build/build.log" 2>&1
# Set already, so that the module finds nothing to do instead of running locale-gen and update-locale again at
# every first boot (slow under emulation: docs/testing.md, Benchmarks).
printf 'LANG=en_US.UTF-8\n' >"$root/etc/default/locale"
# Amazon Linux 2023 neither enables MariaDB nor nftables on installation: the script must.
in_image systemctl disable mariadb.service >>"$build/build.log" 2>&1
in_image systemctl disable nftables.service >>"$build/build.log" 2>&1 || true
in_image systemctl enable imds-standin.service >>"$build/build.log" 2>&1
# No machine-id: each boot of a fresh copy is a new machine (systemd creates one on first boot).
: >"$root/etc/machine-id"
rm -f "$root"/etc/ssh/ssh_host_*  # cloud-init generates them per instance
cp "$root"/boot/vmlinuz-* "$build/vmlinuz"
cp "$root"/boot/initrd.img-* "$build/initrd.img"
chmod 644 "$build/vmlinuz" "$build/initrd.img"

fs=xfs
log "mkfs.xfs from a prototype file (no mount needed)"
printf '/dev/vda / xfs defaults 0 0\n' >"$root/etc/fstab"
python3 "$HERE/xfs-protofile.py" "$root" >"$build/proto.txt" 2>>"$build/build.log"
truncate -s "$DISK_SIZE" "$build/root.img"
if ! mkfs.xfs -q -f -p "$build/proto.txt" "$build/root.img" >>"$build/build.log" 2>&1; then
  log "mkfs.xfs -p failed (see $build/build.log); building ext4 instead"
  fs=ext4
  printf '/dev/vda / ext4 defaults 0 1\n' >"$root/etc/fstab"
  rm -f "$build/root.img"
  mkfs.ext4 -q -F -d "$root" "$build/root.img" "$DISK_SIZE" >>"$build/build.log" 2>&1
fi
printf '%s\n' "$fs" >"$build/fs-type"
rm -rf "$root" "$build/proto.txt"
log "image ($fs) built in $((SECONDS - start)) s"

# Older keys are stale inputs, but another run on this machine may still boot from one (its
# overlays' backing file and the ssh key live there; deleting them broke such a run): only images
# built more than 12 hours ago go.
find "$CACHE" -mindepth 1 -maxdepth 1 -type d -mmin +720 ! -name "$key" ! -name '.build-*' -exec rm -rf {} +
touch "$build/.complete"
trap - EXIT
mv "$build" "$dir"
printf '%s\n' "$dir"
