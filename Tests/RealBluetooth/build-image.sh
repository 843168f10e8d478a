#!/usr/bin/env bash
# Builds the VM the real-Bluetooth tests boot, once, into a cache outside the repository:
#   <cache>/<key>/vmlinux       Debian 12's own kernel (the image linux-image-amd64 depends on),
#                               uncompressed: qemu starts it directly (its PVH entry), where
#                               decompressing vmlinuz under emulation took a dozen seconds a boot
#   <cache>/<key>/vmlinuz       the same kernel as Debian ships it (the KVM probe boots it)
#   <cache>/<key>/rootfs.cpio   the whole root filesystem as an initramfs: bluez (bluetoothd,
#                               btmon), dbus, the libraries hrmd links (SQLite, libbluetooth,
#                               libmosquitto, libpq), Python 3.11 with Bumble under /opt/bumble
#                               (compiled to bytecode), and the kernel modules the tests load
#                               (bluetooth, hci_vhci, 9p)
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
if [ -s "$image/rootfs.cpio" ] && [ -s "$image/vmlinux" ]; then echo "$image"; exit 0; fi
if [ "$(id -u)" != 0 ]; then
	echo "the VM image is not built yet, and building it needs root (debootstrap)" >&2
	exit 77
fi
# One build at a time; whoever waited finds the image built.
mkdir -p "$cache"
exec 9> "$cache/.build.lock"
flock 9
if [ -s "$image/rootfs.cpio" ] && [ -s "$image/vmlinux" ]; then echo "$image"; exit 0; fi

# No linux-image-amd64 here: installing it builds an initramfs twice (its own and the trigger of
# initramfs-tools), which the VM never uses, and that was a third of the build. The kernel
# package is fetched and unpacked aside below.
packages=bluez,dbus,python3,libsqlite3-0,libbluetooth3,libmosquitto1,libpq5,libstdc++6,kmod,procps,util-linux
# The modules the VM loads, with what they need (modprobe resolves the rest from modules.dep).
modules="bluetooth hci_vhci 9p 9pnet_virtio virtio_pci"

work=$(mktemp -d "${TMPDIR:-/tmp}/hrmd-vm-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
echo "building the real-Bluetooth VM image in $image (debootstrap, about a minute or two)" >&2
debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
	|| { tail -20 "$work/debootstrap.log" >&2; echo "debootstrap failed (log above)" >&2; exit 1; }

# The kernel: the package linux-image-amd64 depends on, found in the package list debootstrap
# fetched and checked against the signed Release file, downloaded, checked by its SHA-256, and
# unpacked (not installed) inside the root with the root's own dpkg-deb.
list=$(ls "$root"/var/lib/apt/lists/*_main_binary-amd64_Packages)
stanza() { awk -v RS= -v name="$1" '$0 ~ "(^|\n)Package: " name "\n"' "$list"; }
kpackage=$(stanza linux-image-amd64 | sed -n 's/^Depends: \([^ ,]*\).*/\1/p')
kfile=$(stanza "$kpackage" | sed -n 's/^Filename: //p')
ksum=$(stanza "$kpackage" | sed -n 's/^SHA256: //p')
[ -n "$kfile" ] && [ -n "$ksum" ] || { echo "no kernel package found for linux-image-amd64 ($kpackage)" >&2; exit 1; }
wget -q -O "$root/tmp/kernel.deb" "$mirror/$kfile"
echo "$ksum  $root/tmp/kernel.deb" | sha256sum -c --quiet >&2
chroot "$root" dpkg-deb -x /tmp/kernel.deb /tmp/kernel
kernel=$root/tmp/kernel
kver=$(ls "$kernel/lib/modules")
depmod --basedir "$kernel" "$kver"

# Bumble from wheels for the VM's CPython 3.11 (the same minor version on both sides), compiled
# to bytecode by the VM's own Python, so that no boot compiles it again.
python3 -m pip download --quiet --only-binary=:all: --python-version 3.11 --implementation cp \
	--platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
	-r "$here/requirements.txt" -d "$work/wheels" >&2
python3 -m pip install --quiet --root-user-action=ignore --no-deps --no-index --no-compile --target "$root/opt/bumble" "$work"/wheels/*.whl >&2
chroot "$root" python3 -m compileall -q /opt/bumble > /dev/null \
	|| echo "some of /opt/bumble did not compile: the VM compiles it at import" >&2

# Only the kernel modules the tests load and their dependencies go into the root.
{
	for module in $modules; do
		modprobe --dirname "$kernel" --set-version "$kver" --show-depends "$module" | awk '$1 == "insmod" {print $2}'
	done
	# SMP (pairing) asks the crypto API for cmac(aes) and ecdh at run time: keep the crypto modules.
	find "$kernel/lib/modules/$kver/kernel/crypto" "$kernel/lib/modules/$kver/kernel/arch/x86/crypto" -name '*.ko'
} | sort -u | while read -r path; do
	relative=${path#"$kernel"/lib/modules/}
	mkdir -p "$root/lib/modules/$(dirname "$relative")"
	cp "$path" "$root/lib/modules/$relative"
done
cp "$kernel/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kver/"
depmod --basedir "$root" "$kver"

mkdir -p "$image.tmp"
cp "$kernel/boot/vmlinuz-$kver" "$image.tmp/vmlinuz"
# vmlinuz is a small program that decompresses the kernel (xz for Debian's): do it once here.
python3 - "$image.tmp/vmlinuz" "$image.tmp/vmlinux" <<'PY'
import lzma, sys, zlib
data = open(sys.argv[1], "rb").read()
decoders = ((b"\xfd7zXZ\x00", lambda b: lzma.LZMADecompressor().decompress(b)),
            (b"\x1f\x8b\x08", lambda b: zlib.decompressobj(31).decompress(b)))
for magic, decode in decoders:
    at = data.find(magic)
    while at >= 0:
        try:
            elf = decode(data[at:])
        except (lzma.LZMAError, zlib.error):
            elf = b""
        if elf[:4] == b"\x7fELF":
            open(sys.argv[2], "wb").write(elf)
            sys.exit(0)
        at = data.find(magic, at + 1)
sys.exit(f"{sys.argv[1]}: no xz or gzip kernel inside")
PY
# What the VM never uses: the kernel package, the package manager's data, udev's hardware
# database (no udevd runs), perl (debconf's), Python's tests and documentation.
rm -rf "$root"/tmp/* "$root"/boot/* "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/var/lib/dpkg \
	"$root"/usr/share/{doc,man,info,locale,perl5} "$root"/usr/lib/udev/hwdb.d "$root"/usr/lib/udev/hwdb.bin \
	"$root"/usr/bin/perl* "$root"/usr/lib/x86_64-linux-gnu/perl-base \
	"$root"/usr/lib/python3.11/{test,pydoc_data}
install -m 0755 "$here/vm-init" "$root/init"
(cd "$root" && find . -print0 | cpio --null --create --format=newc --quiet) > "$image.tmp/rootfs.cpio"
printf 'kernel %s\nbumble %s\n' "$kver" "$(ls "$work/wheels" | grep -o '^bumble-[^-]*')" > "$image.tmp/versions"
rm -rf "$image" && mv "$image.tmp" "$image"
# Images of older scripts: keep the two newest besides this one (other checkouts may use them).
ls -1td "$cache"/*/ | tail -n +4 | xargs -r rm -rf
echo "$image"
