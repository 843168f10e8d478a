#!/usr/bin/env python3
"""hrmd against the real Bluetooth stack: Debian 12's kernel and bluetoothd in a qemu VM, with
Bumble's virtual controller behind /dev/vhci and virtual straps on its air link.

    run.py [SCENARIO[:BACKEND] ...]      all scenarios when none are named
    run.py --bench                       the BLE benchmark: hrmd, the bleak logger, the C floor

Builds the VM image once (build-image.sh, cached outside the repository), shares a run folder
with the VM over 9p (the built hrmd and hrmctl, the Swift runtime they link, the scenario
scripts), boots the VMs (two at once by default, each running its share of the scenarios), and
reads each scenario's result back from the folder's `out/`, where the
logs and btmon captures stay for reading (see docs/testing.md).

Environment: HRMD_BIN_DIR (default .build/debug), HRMD_VM_OUT (default .build/real-bluetooth),
HRMD_VM_ACCEL (kvm or tcg; by default kvm where it boots the kernel, found out once per image),
HRMD_VM_TIMEOUT (seconds for the whole VM run, default 1500), HRMD_VM_JOBS (how many VMs run
the scenarios at once, each its share; default 2), HRMD_VM_CACHE (where images live),
HRMD_VM_MONITOR (set: each scenario also keeps `out/<scenario>-<backend>.dbus.log`,
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


class VM:
    """One qemu process running vm-main with `arguments`, its serial console kept in `console`."""

    def __init__(self, image: str, run_dir: str, arguments: list[str], console: str):
        accel = accelerator(image)
        # The uncompressed kernel when the image has one (qemu enters it directly), else vmlinuz.
        kernel = os.path.join(image, "vmlinux")
        if not os.path.exists(kernel):
            kernel = os.path.join(image, "vmlinuz")
        vm_args = " ".join(arguments)
        command = [
            "qemu-system-x86_64", "-accel", accel, "-cpu", "max" if accel == "tcg" else "host",
            "-m", "2048", "-smp", "2", "-nographic", "-nic", "none", "-no-reboot",
            "-kernel", kernel, "-initrd", os.path.join(image, "rootfs.cpio"),
            "-append", f'console=ttyS0 panic=-1 quiet hrmd_vm_args="{vm_args}"',
            "-virtfs", f"local,path={run_dir},mount_tag=hrmdrun,security_model=none,id=hrmdrun",
            # The same folder again, read-only, for the binaries (vm-main mounts it keeping the
            # page cache; a virtio 9p device takes one mount at a time).
            "-virtfs", f"local,path={run_dir},mount_tag=hrmdbin,security_model=none,id=hrmdbin,readonly=on",
        ]
        self.console = open(console, "w")
        self.started = time.monotonic()
        self.ready: float | None = None  # when vm-main said it was ready to run scenarios
        self.ended: float | None = None
        self.status: int | None = None
        self.pending = b""
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def take(self, chunk: bytes) -> None:
        self.console.write(chunk.decode(errors="replace"))
        self.pending += chunk
        *lines, self.pending = self.pending.split(b"\n")
        for line in lines:
            text = line.decode(errors="replace").strip("\r")
            # The firmware's last words may share the line ("Booting from ROM..hrmd-vm: ...").
            at = text.find("hrmd-vm: ")
            if at < 0:
                continue
            text = text[at + len("hrmd-vm: "):]
            if text.startswith("ready"):
                self.ready = time.monotonic()
            print(f"real-bluetooth: {text}", flush=True)

    def finish(self, status: int) -> None:
        self.process.wait()
        self.take(self.process.stdout.read() + b"\n")
        self.console.close()
        self.status = status
        self.ended = time.monotonic()


def boot(image: str, run_dir: str, runs: list[list[str]], timeout: float) -> list[VM]:
    """Boots one VM per entry of `runs` (the arguments of its vm-main) at once and follows their
    consoles until all have powered off, bounded by `timeout` in all."""
    several = len(runs) > 1
    vms = [VM(image, run_dir, arguments, os.path.join(run_dir, "out", f"console-vm{n}.log" if several else "console.log"))
           for n, arguments in enumerate(runs, 1)]
    deadline = time.monotonic() + timeout
    selector = selectors.DefaultSelector()
    for vm in vms:
        selector.register(vm.process.stdout, selectors.EVENT_READ, vm)
    running = list(vms)
    while running:
        if time.monotonic() > deadline:
            for vm in running:
                vm.process.kill()
                vm.finish(124)
            print(f"real-bluetooth: the VM did not finish within {timeout:.0f} s; killed", flush=True)
            break
        for key, _ in selector.select(timeout=1.0):
            chunk = os.read(key.fileobj.fileno(), 65536)
            if chunk:
                key.data.take(chunk)
        for vm in list(running):
            if vm.process.poll() is not None:
                selector.unregister(vm.process.stdout)
                vm.finish(vm.process.returncode)
                running.remove(vm)
    return vms


def vm_count(arguments: list[str]) -> int:
    """How many VMs to boot: HRMD_VM_JOBS (default 2), no more than the runs asked for (a name
    alone is a run per backend, NAME:BACKEND one run)."""
    jobs = max(1, int(os.environ.get("HRMD_VM_JOBS", "2")))
    if arguments:
        jobs = min(jobs, sum(1 if ":" in a else 2 for a in arguments))
    return jobs


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
    jobs = 1 if bench else vm_count(arguments)
    runs = [arguments] if jobs == 1 else [[f"--vm={n}/{jobs}", *arguments] for n in range(1, jobs + 1)]
    vms = boot(image, run_dir, runs, timeout)
    ended = time.monotonic()
    results = [json.load(open(path)) for path in sorted(glob.glob(os.path.join(run_dir, "out", "*.result.json")))]
    failed = [r for r in results if not r.get("passed")]
    for result in failed:
        print(f"real-bluetooth: FAILED {result['scenario']} ({result['backend']}): {result.get('error')}")
        print(result.get("traceback", ""))
    # Wall time: building (or finding) the image, booting until every VM was ready to run its
    # scenarios, and the rest (the scenarios, then each VM's power-off).
    ready = max((vm.ready or vm.ended) for vm in vms)
    print(f"real-bluetooth: {len(results) - len(failed)} passed, {len(failed)} failed "
          f"(wall {ended - began:.0f} s: image {built - began:.0f} s, boot {ready - built:.0f} s, "
          f"scenarios {ended - ready:.0f} s; {len(vms)} VM{'s' if len(vms) > 1 else ''}); logs and captures in {run_dir}/out")
    status = next((vm.status for vm in vms if vm.status), 0)
    if status != 0 and not failed:
        console = "console.log" if len(vms) == 1 else "console-vm*.log"
        print(f"real-bluetooth: a VM ended with status {status}; see {run_dir}/out/{console}")
        return 1
    if not results:
        print("real-bluetooth: no scenario reported a result")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
