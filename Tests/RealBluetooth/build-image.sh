#!/usr/bin/env bash
# Builds the VM the real-Bluetooth tests boot, once, into a cache outside the repository:
#   <cache>/<key>/vmlinuz       Debian 12's own kernel (linux-image-amd64)
#   <cache>/<key>/rootfs.cpio   the whole root filesystem as an initramfs: bluez (bluetoothd,
#                               btmon), dbus, the libraries hrmd links (SQLite, libbluetooth,
#                               libmosquitto, libpq), Python 3.11 with Bumble under /opt/bumble, and the
#                               kernel modules the tests load (bluetooth, hci_vhci, 9p)
# The key is a hash of this script, the VM's init and the wheel list, so a change rebuilds it.
# Prints the image folder. Building needs root (debootstrap; without it: exit 77), and network
# to deb.debian.org and PyPI.
#   HRMD_VM_CACHE   where images live (default ${XDG_CACHE_HOME:-~/.cache}/hrmd-vm)
#   DEBIAN_MIRROR   the Debian mirror (default http://deb.debian.org/debian)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${HRMD_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hrmd-vm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
key=$(cat "$here/build-image.sh" "$here/vm-init" "$here/requirements.txt" | sha256sum | cut -c1-16)
image=$cache/$key
if [ -s "$image/rootfs.cpio" ] && [ -s "$image/vmlinuz" ]; then echo "$image"; exit 0; fi
if [ "$(id -u)" != 0 ]; then
	echo "the VM image is not built yet, and building it needs root (debootstrap)" >&2
	exit 77
fi
# One build at a time; whoever waited finds the image built.
mkdir -p "$cache"
exec 9> "$cache/.build.lock"
flock 9
if [ -s "$image/rootfs.cpio" ] && [ -s "$image/vmlinuz" ]; then echo "$image"; exit 0; fi

packages=linux-image-amd64,bluez,dbus,python3,libsqlite3-0,libbluetooth3,libmosquitto1,libpq5,libstdc++6,kmod,procps,util-linux
# The modules the VM loads, with what they need (modprobe resolves the rest from modules.dep).
modules="bluetooth hci_vhci 9p 9pnet_virtio virtio_pci"

work=$(mktemp -d "${TMPDIR:-/tmp}/hrmd-vm-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
echo "building the real-Bluetooth VM image in $image (debootstrap, about two minutes)" >&2
debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
	|| { tail -20 "$work/debootstrap.log" >&2; echo "debootstrap failed (log above)" >&2; exit 1; }

# Bumble from wheels for the VM's CPython 3.11 (the same minor version on both sides).
python3 -m pip download --quiet --only-binary=:all: --python-version 3.11 --implementation cp \
	--platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
	-r "$here/requirements.txt" -d "$work/wheels" >&2
python3 -m pip install --quiet --root-user-action=ignore --no-deps --no-index --no-compile --target "$root/opt/bumble" "$work"/wheels/*.whl >&2

# Keep only the kernel modules the tests load and their dependencies.
kver=$(ls "$root/lib/modules")
keep=$work/keep
for module in $modules; do
	modprobe --dirname "$root" --set-version "$kver" --show-depends "$module" | awk '$1 == "insmod" {print $2}'
done | sort -u > "$keep"
# SMP (pairing) asks the crypto API for cmac(aes) and ecdh at run time: keep the crypto modules.
find "$root/lib/modules/$kver/kernel/crypto" "$root/lib/modules/$kver/kernel/arch/x86/crypto" -name '*.ko' >> "$keep"
find "$root/lib/modules/$kver/kernel" -name '*.ko' | grep -vxF -f "$keep" | xargs rm -f
depmod --basedir "$root" "$kver"

mkdir -p "$image.tmp"
cp "$root/boot/vmlinuz-$kver" "$image.tmp/vmlinuz"
rm -rf "$root"/boot/* "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/usr/share/{doc,man,info,locale}
install -m 0755 "$here/vm-init" "$root/init"
(cd "$root" && find . -print0 | cpio --null --create --format=newc --quiet) > "$image.tmp/rootfs.cpio"
printf 'kernel %s\nbumble %s\n' "$kver" "$(ls "$work/wheels" | grep -o '^bumble-[^-]*')" > "$image.tmp/versions"
rm -rf "$image" && mv "$image.tmp" "$image"
# Images of older scripts: keep the two newest besides this one (other checkouts may use them).
ls -1td "$cache"/*/ | tail -n +4 | xargs -r rm -rf
echo "$image"
