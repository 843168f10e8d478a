#!/usr/bin/env python3
"""hrmd against the real Bluetooth stack: Debian 12's kernel and bluetoothd in a qemu VM, with
Bumble's virtual controller behind /dev/vhci and virtual straps on its air link.

    run.py [SCENARIO[:BACKEND] ...]      all scenarios when none are named
    run.py --bench                       the BLE benchmark: hrmd, the bleak logger, the C floor

Builds the VM image once (build-image.sh, cached outside the repository), shares a run folder
with the VM over 9p (the built hrmd and hrmctl, the Swift runtime they link, the scenario
scripts), boots it, and reads each scenario's result back from the folder's `out/`, where the
logs and btmon captures stay for reading (see docs/testing.md).

Environment: HRMD_BIN_DIR (default .build/debug), HRMD_VM_OUT (default .build/real-bluetooth),
HRMD_VM_ACCEL (kvm or tcg; by default kvm where it boots the kernel, found out once per image),
HRMD_VM_TIMEOUT (seconds for the whole VM run, default 1500), HRMD_VM_CACHE (where images
live), HRMD_VM_MONITOR (set: each scenario also keeps `out/<scenario>-<backend>.dbus.log`,
dbus-monitor's record of the system bus; it slows the VM, so not for figures).
"""

from __future__ import annotations

import glob
import json
import os
import selectors
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def swift_libraries(binary: str) -> list[str]:
    """The shared libraries `binary` links that a Debian system does not have: Swift's runtime."""
    out = subprocess.run(["ldd", binary], check=True, capture_output=True, text=True).stdout
    paths = []
    for line in out.splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and (path := parts[1].split("(")[0].strip()) and path.startswith("/"):
            if not path.startswith(("/lib/", "/usr/lib/", "/lib64/")):
                paths.append(path)
    return paths


def prepare(run_dir: str, bin_dir: str, bench: bool = False) -> None:
    if os.path.exists(run_dir):
        shutil.rmtree(run_dir)
    for sub in ("bin", "lib", "out"):
        os.makedirs(os.path.join(run_dir, sub))
    libraries = set()
    for tool in ("hrmd", "hrmctl"):
        binary = os.path.join(bin_dir, tool)
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"{binary} is missing: build first (swift build)")
        shutil.copy2(binary, os.path.join(run_dir, "bin", tool))
        libraries.update(swift_libraries(binary))
    for library in libraries:
        shutil.copy2(library, os.path.join(run_dir, "lib", os.path.basename(library)))
    shutil.copytree(os.path.join(HERE, "vm"), os.path.join(run_dir, "vm"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(os.path.join(HERE, "vm-main"), os.path.join(run_dir, "vm-main"))
    # The settings the VM's side reads (HRMD_VM_*), as shell assignments vm-main sources.
    with open(os.path.join(run_dir, "settings"), "w") as file:
        for name, value in sorted(os.environ.items()):
            if name.startswith("HRMD_VM_") and all(c.isalnum() or c in "._-" for c in value):
                file.write(f"export {name}={value}\n")
    if os.environ.get("HRMD_VM_MONITOR"):
        open(os.path.join(run_dir, "monitor"), "w").close()
    if bench:
        # The benchmark's peers: the bleak logger, and the C floor built against libsystemd here
        # (the VM has the same Debian libsystemd0).
        os.makedirs(os.path.join(run_dir, "bench"))
        shutil.copy2(os.path.join(ROOT, "bench", "bleak_logger.py"), os.path.join(run_dir, "bench"))
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libsystemd"], check=True,
                               capture_output=True, text=True).stdout.split()
        subprocess.run(["cc", "-O2", "-o", os.path.join(run_dir, "bin", "floor_client"),
                        os.path.join(ROOT, "bench", "floor_client.c"), *flags], check=True)


def accelerator(image: str) -> str:
    """kvm when /dev/kvm works here, else tcg (software emulation). A nested /dev/kvm can be
    present yet hang in the firmware, so the first run on a machine boots the kernel once with
    KVM, bounded, and the answer is kept beside the image."""
    chosen = os.environ.get("HRMD_VM_ACCEL")
    if chosen:
        return chosen
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg"
    verdict = os.path.join(image, "kvm-probe")
    if os.path.exists(verdict):
        return open(verdict).read().strip()
    probe = subprocess.Popen(
        ["qemu-system-x86_64", "-accel", "kvm", "-cpu", "host", "-m", "256", "-nographic", "-nic", "none",
         "-no-reboot", "-kernel", os.path.join(image, "vmlinuz"), "-append", "console=ttyS0 panic=-1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    result = "tcg"
    deadline = time.monotonic() + 20
    seen = b""
    selector = selectors.DefaultSelector()
    selector.register(probe.stdout, selectors.EVENT_READ)
    while time.monotonic() < deadline and probe.poll() is None:
        if selector.select(timeout=0.5):
            seen += os.read(probe.stdout.fileno(), 65536)
            if b"Linux version" in seen:
                result = "kvm"
                break
    probe.kill()
    probe.wait()
    with open(verdict, "w") as file:
        file.write(result + "\n")
    print(f"real-bluetooth: KVM {'works' if result == 'kvm' else 'does not boot the kernel here'}; using {result}", flush=True)
    return result


def boot(image: str, run_dir: str, arguments: list[str], timeout: float) -> int:
    accel = accelerator(image)
    vm_args = " ".join(arguments)
    command = [
        "qemu-system-x86_64", "-accel", accel, "-cpu", "max" if accel == "tcg" else "host",
        "-m", "2048", "-smp", "2", "-nographic", "-nic", "none", "-no-reboot",
        "-kernel", os.path.join(image, "vmlinuz"), "-initrd", os.path.join(image, "rootfs.cpio"),
        "-append", f'console=ttyS0 panic=-1 quiet hrmd_vm_args="{vm_args}"',
        "-virtfs", f"local,path={run_dir},mount_tag=hrmdrun,security_model=none,id=hrmdrun",
    ]
    console = open(os.path.join(run_dir, "out", "console.log"), "w")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    assert process.stdout
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    pending = b""
    while process.poll() is None:
        if time.monotonic() > deadline:
            process.kill()
            process.wait()
            print(f"real-bluetooth: the VM did not finish within {timeout:.0f} s; killed", flush=True)
            return 124
        if selector.select(timeout=1.0):
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                continue
            console.write(chunk.decode(errors="replace"))
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                text = line.decode(errors="replace").strip("\r")
                if text.startswith("hrmd-vm:"):
                    print(f"real-bluetooth: {text[len('hrmd-vm: '):]}", flush=True)
    rest = process.stdout.read()
    console.write(rest.decode(errors="replace"))
    console.close()
    return process.returncode


def main() -> int:
    arguments = sys.argv[1:]
    bench = arguments == ["--bench"]
    if bench:
        arguments = ["bench"]
    bin_dir = os.path.abspath(os.environ.get("HRMD_BIN_DIR", os.path.join(ROOT, ".build", "debug")))
    run_dir = os.path.abspath(os.environ.get("HRMD_VM_OUT", os.path.join(ROOT, ".build", "real-bluetooth")))
    timeout = float(os.environ.get("HRMD_VM_TIMEOUT", "1500"))
    began = time.monotonic()
    built_image = subprocess.run(["bash", os.path.join(HERE, "build-image.sh")], stdout=subprocess.PIPE, text=True)
    if built_image.returncode == 77:
        # Without root the image cannot be built: a skip on a developer's machine, a failure in CI.
        if os.environ.get("CI"):
            print("real-bluetooth: FAIL: the VM image needs root to build, and CI must run these tests")
            return 1
        print("real-bluetooth: SKIP (the VM image needs root to build: run once as root, or sudo make check-bluetooth)")
        return 0
    if built_image.returncode != 0:
        print(f"real-bluetooth: building the VM image failed (status {built_image.returncode})")
        return 1
    image = built_image.stdout.strip().splitlines()[-1]
    built = time.monotonic()
    prepare(run_dir, bin_dir, bench)
    status = boot(image, run_dir, arguments, timeout)
    results = [json.load(open(path)) for path in sorted(glob.glob(os.path.join(run_dir, "out", "*.result.json")))]
    failed = [r for r in results if not r.get("passed")]
    for result in failed:
        print(f"real-bluetooth: FAILED {result['scenario']} ({result['backend']}): {result.get('error')}")
        print(result.get("traceback", ""))
    print(f"real-bluetooth: {len(results) - len(failed)} passed, {len(failed)} failed "
          f"(image {built - began:.0f} s, VM {time.monotonic() - built:.0f} s); logs and captures in {run_dir}/out")
    if status != 0 and not failed:
        print(f"real-bluetooth: the VM ended with status {status}; see {run_dir}/out/console.log")
        return 1
    if not results:
        print("real-bluetooth: no scenario reported a result")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
