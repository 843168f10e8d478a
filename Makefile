# hrmd — build, test, demo and benchmark.
#   make help    every target with what it does, one line each: start here
#   make demo    set up, build, run hrmd with mock straps into ./demo/hrmd.sqlite, show the readings
#   make test    set up, build and run every test (unit, store, pipeline, end to end)
#   make bench   release builds and the benchmarks with their peers (Benchmarks, a package of its own)
#                (make bench-service: only the store service's; HRMBENCH_SERVICE_DAYS=7 for a small store)

SHELL := /bin/bash
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Build: SQLite, libsystemd (sd-bus, sd_notify, journal), libudev, libbluetooth.
# Tests: a private dbus-daemon with a fake BlueZ and a fake polkit (python3-dbusmock), udevadm,
# umockdev, xmllint (libxml2-utils) for the shipped D-Bus and polkit files, tshark (Wireshark's
# dissectors) for the btsnoop captures the tests build; libmosquitto (build), a mosquitto broker
# and paho-mqtt (tests) for the MQTT publisher; libpq (build) and a PostgreSQL server (tests:
# initdb and pg_ctl start one of their own) for the PostgreSQL client.
# The HTTP front's tests: sqlite3, openssl (a self-signed certificate); a venv
# for schemathesis (python3-venv).
# Benchmarks: /usr/bin/time, and a venv for bleak (python3-venv); psycopg2 (python3-psycopg2) for the
# central sync's peer and observers.
# The real Bluetooth stack: qemu, debootstrap, cpio and kmod build and boot a Debian 12 VM.
# The web pages: headless Chromium driven through chromedriver by python3-selenium; dygraphs
# (libjs-dygraphs) draws the day view's charts and is served from /usr/share/javascript.
APT_PACKAGES := libsqlite3-dev sqlite3 libsystemd-dev libudev-dev libbluetooth-dev systemd \
	dbus-daemon python3-dbus python3-gi python3-dbusmock udev umockdev libumockdev-dev gir1.2-umockdev-1.0 \
	time python3-venv libxml2-utils tshark python3-hypothesis python3-websockets openssl \
	mosquitto libmosquitto-dev python3-paho-mqtt \
	postgresql-15 libpq-dev python3-psycopg2 \
	qemu-system-x86 debootstrap cpio kmod \
	chromium chromium-driver python3-selenium libjs-dygraphs
# Every build checks that each module imports only what Package.swift says it depends on.
SWIFT_BUILD_FLAGS := --explicit-target-dependency-import-check error
# The release link of hrmd and hrmctl, lighter to load and keep resident (docs/benchmarks.md,
# memory): lld with packed relative relocations (DT_RELR: ~17 KB in place of 2.2 MB of
# .rela.dyn, read at every start), no dynamic symbol table of the executable's own ~17,000
# symbols (nothing looks them up; backtraces read the file's .symtab), and the functions that
# run laid out together (Sources/hrmd/hrmd.order, from bench/hrmd-order-file.sh). Given here,
# not in Package.swift, so that the package has no unsafe flags and others may depend on it.
RELEASE_LINK_FLAGS := -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic \
	-Xlinker --symbol-ordering-file=$(CURDIR)/Sources/hrmd/hrmd.order -Xlinker --no-warn-symbol-ordering
# hrmctl, a command run once per query, is linked again at a fixed address: it then starts
# without relocating ~100,000 pointers in copy-on-write pages (about a third of its start-up).
# hrmd, a long-lived daemon that parses radio input, stays position-independent. Only the link
# differs, so the second build only links hrmctl again.
HRMCTL_LINK_FLAGS := -Xlinker --no-pie
DEMO_DIR := demo
DEMO_STORE := $(DEMO_DIR)/hrmd.sqlite
DEBUG_BIN := .build/debug
RELEASE_BIN := .build/release
# The benchmarks' package (hrmbench, stack-floor), built on its own and run against $(RELEASE_BIN).
# It links hrmd's modules through library products the root package declares only under
# HRMD_BENCHMARKS=1 (Package.swift), so that by default it exports hrmd, hrmctl and HealthClient.
BENCH_PACKAGE := Benchmarks
BENCH_SWIFT := HRMD_BENCHMARKS=1 $(SWIFT)
BENCH_RELEASE_BIN := $(BENCH_PACKAGE)/.build/release

# Installation (make install PREFIX=/usr DESTDIR=/tmp/pkg)
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
BINDIR := $(PREFIX)/bin
LIBDIR := $(PREFIX)/lib
MANDIR := $(PREFIX)/share/man
UNITDIR ?= $(LIBDIR)/systemd/system
USERUNITDIR ?= $(LIBDIR)/systemd/user
DBUSDIR := $(PREFIX)/share/dbus-1
POLKITDIR := $(PREFIX)/share/polkit-1
DOCDIR := $(PREFIX)/share/doc/hrmd
WEBDIR := $(PREFIX)/share/hrmd/web
# What the HTTP front serves (hrmd --http): the files of web/ and of web/static/.
WEB_TOP_FILES := $(filter-out web/static,$(wildcard web/*))
WEB_FILES := $(WEB_TOP_FILES) $(wildcard web/static/*)
INSTALLED := \
	$(BINDIR)/hrmd $(BINDIR)/hrmctl \
	$(UNITDIR)/hrmd.service $(USERUNITDIR)/hrmd-notify.service \
	$(LIBDIR)/sysusers.d/hrmd.conf $(LIBDIR)/tmpfiles.d/hrmd.conf \
	$(LIBDIR)/udev/rules.d/60-hrmd.rules \
	$(DBUSDIR)/system.d/org.hrmd.Health.conf $(DBUSDIR)/system-services/org.hrmd.Health.service \
	$(DBUSDIR)/interfaces/org.hrmd.Health1.xml \
	$(POLKITDIR)/actions/org.hrmd.health.policy $(POLKITDIR)/rules.d/50-hrmd.rules \
	$(SYSCONFDIR)/hrmd/hrmd.conf.example \
	$(DOCDIR)/hrmd.service.d/hci.conf $(DOCDIR)/hrmd.service.d/flatpak-identity.conf \
	$(MANDIR)/man8/hrmd.8 $(MANDIR)/man1/hrmctl.1 \
	$(PREFIX)/share/bash-completion/completions/hrmd $(PREFIX)/share/bash-completion/completions/hrmctl \
	$(PREFIX)/share/zsh/site-functions/_hrmd $(PREFIX)/share/zsh/site-functions/_hrmctl \
	$(PREFIX)/share/fish/vendor_completions.d/hrmd.fish $(PREFIX)/share/fish/vendor_completions.d/hrmctl.fish \
	$(addprefix $(WEBDIR)/,$(WEB_FILES:web/%=%))

.PHONY: all help deps build build-tests swift-test test check-exports exports-venv check-docs check-package check-order module-map check-module-map check-bluetooth check-service check-service-bus check-http check-web check-mqtt check-central check-rules check-fake-bluez check-captures check-fuzz check-bench-build fuzz fuzz-bus soak demo bench-release bench bench-live bench-service bench-ble bench-ble-vm bench-mqtt bench-central bench-central-shape bench-alerts bench-figures bench-ecg release install uninstall clean

## all: the default target: build
all: build

## help: list every target with one line on what it does (the ## lines of this Makefile)
help:
	@awk 'match($$0, /^## [A-Za-z0-9_.-]+: /) { name = substr($$0, 4, RLENGTH - 5); if (!(name in doc)) doc[name] = substr($$0, RLENGTH + 1); next } \
		/^[A-Za-z0-9_-][A-Za-z0-9_.-]*:([^=]|$$)/ { name = substr($$0, 1, index($$0, ":") - 1); if (!(name in listed)) { listed[name] = 1; order[++count] = name } } \
		END { print "make TARGET, where TARGET is one of:"; \
			for (i = 1; i <= count; i++) printf "  %-18s %s\n", order[i], (order[i] in doc) ? doc[order[i]] : "(undocumented: give it a ## line)" }' $(MAKEFILE_LIST)

## deps: install the Debian packages the build and tests need (only the missing ones)
## (tshark's question whether non-root users may capture is answered no beforehand)
deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		echo "wireshark-common wireshark-common/install-setuid boolean false" | $(SUDO) debconf-set-selections; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

## build: the debug build of every program (.build/debug)
build: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

## test: set up, build and run every test (unit, store, pipeline, end to end) and the check-* targets,
## HRMD_TEST_JOBS of them at a time (default: cores + 1); prints each part's output whole as it ends,
## then the time and tests of each part (Tests/parts.py; logs in .build/test-parts)
TEST_PARTS := +swift-test +swift-test-hci check-fuzz check-central check-http check-service-bus check-web check-mqtt check-exports \
	check-service check-rules check-fake-bluez check-captures check-docs check-order ^check-bluetooth
test:
	/usr/bin/python3 Tests/parts.py +deps +build-tests +check-package +check-module-map $(TEST_PARTS)

## build-tests: the debug build of every program and test suite (what make test runs)
build-tests: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)

## swift-test: the Swift Testing suites of the debug build (at most 25 min; make build-tests first), but
## the hci backend's scripted-adapter suites, which swift-test-hci runs by themselves
HCI_SUITES := HCIBackendTests\.HCISensors
swift-test:
	timeout --kill-after=30 1500 $(SWIFT) test --skip-build --skip '$(HCI_SUITES)'

## swift-test-hci: the hci backend's scripted-adapter suites alone. Run beside the whole suite, one of
## their links now and then never ends (docs/testing.md, "Known problems"); alone they pass.
swift-test-hci:
	timeout --kill-after=30 600 $(SWIFT) test --skip-build --filter '$(HCI_SUITES)'

## check-package: the manifest's shape: the client library's few modules, no Sources/ target on test code, no unsafe flags
check-package:
	SWIFT="$(SWIFT)" /usr/bin/python3 Tests/package/check_package.py

## check-docs: README.md and docs/*.md: every relative link resolves, and docs/store-service.md matches dbus/org.hrmd.Health1.xml
check-docs:
	/usr/bin/python3 Tests/docs/check_links.py
	/usr/bin/python3 Tests/docs/check_interface_doc.py

## check-order: fail when Sources/hrmd/hrmd.order (the release link's function order) is stale: fewer than 95 % of
## the functions of hrmd's own modules it lists are in the built debug hrmd (Tests/package/check_order_file.py;
## nm only, after the debug build; HRMD_BIN_DIR chooses the hrmd). bench/hrmd-order-file.sh remakes the file.
check-order:
	/usr/bin/python3 Tests/package/check_order_file.py

## module-map: redraw docs/module-map.svg, the module map, from Package.swift (swift package dump-package)
module-map:
	SWIFT="$(SWIFT)" /usr/bin/python3 docs/module-map.py

## check-module-map: fail when docs/module-map.svg is not what docs/module-map.py draws from Package.swift now
check-module-map:
	SWIFT="$(SWIFT)" /usr/bin/python3 docs/module-map.py --check

## check-service: the unit's syntax and security score, and an install into a scratch DESTDIR
check-service:
	SWIFT="$(SWIFT)" bash Tests/service/check-service.sh

## check-rules: the udev rules under `udevadm test` in a private mount namespace (root; SKIP otherwise, FAIL in CI)
check-rules:
	bash Tests/udev/check-rules.sh

## check-fake-bluez: the fake bluetoothd the BlueZ tests run against, driven by a D-Bus client
check-fake-bluez:
	/usr/bin/python3 Tests/BlueZ/test_fake_bluez.py

## check-captures: the btsnoop captures the tests build, read back by tshark (Wireshark's dissectors)
## and checked: records, connections, reassembly, the GATT handle mapping and every value
check-captures:
	CAPTURE_WRITER=$(DEBUG_BIN)/capture-writer bash Tests/captures/check-captures.sh

## check-service-bus: the store service's tests: hrmd --serve on a private system-like bus (root)
## with the shipped policy, a mock polkit and applications of other uids (skipped without root, failed
## in CI; the service tests skip until hrmd has --serve). HRMD_BIN_DIR chooses the hrmd (default .build/debug).
check-service-bus:
	timeout --kill-after=10 900 /usr/bin/python3 Tests/HealthService/run.py

## check-http: the HTTP front's tests against the built hrmd and hrmctl (Tests/HTTPFront/run.py: tokens,
## paging, live streams, hostile clients, TLS), then a short schemathesis run from web/openapi.json
## (skipped without the binaries, failed in CI). HRMD_BIN_DIR chooses the binaries (default .build/debug).
check-http:
	timeout --kill-after=10 900 /usr/bin/python3 Tests/HTTPFront/run.py
	$(MAKE) --no-print-directory http-fuzz-venv
	timeout --kill-after=10 300 bash Tests/HTTPFront/fuzz.sh --max-examples 20 --seconds 240

## check-web: the web pages (dashboard, group view, overlay, day view) in headless Chromium against hrmd --http
## with mock straps (Tests/web; skipped while a piece is missing, failed in CI); screenshots in .build/test-artifacts/web
check-web:
	timeout --kill-after=10 600 /usr/bin/python3 Tests/web/run.py

## check-mqtt: the MQTT publisher end to end: hrmd with mock straps publishing to a real mosquitto on a free
## loopback port, a paho-mqtt subscriber, hrmctl grants and revokes (Tests/MQTT; skipped without mosquitto or
## paho-mqtt, failed in CI). HRMD_BIN_DIR chooses the binaries (default .build/debug).
check-mqtt:
	timeout --kill-after=10 600 /usr/bin/python3 Tests/MQTT/run.py

## check-central: the central store's sync end to end (Tests/CentralStore): the built hrmd and hrmctl against
## PostgreSQL servers of their own (as uid 65534 when root): three gateways at once, the server stopped and crashed,
## a silent connection, 100 SIGKILLs mid-batch, two receivers of one ANT+ strap, a full disk (a tmpfs tablespace;
## root), bad set-ups, read grants; the central store against the union of the local stores, sample by sample
## (per-test counts in .build/central-faults.json; skipped without PostgreSQL, failed in CI). HRMD_BIN_DIR chooses
## the binaries (default .build/debug).
check-central:
	timeout --kill-after=10 900 /usr/bin/python3 Tests/CentralStore/run.py

## fuzz: fuzz every parser (Tests/Fuzz/Targets), then the store service's D-Bus methods (fuzz-bus)
## and the HTTP API (fuzz-http) for FUZZ_SECONDS each (default 600), or FUZZ_RUNS executions each;
## FUZZ_TARGETS chooses some parsers (and skips fuzz-bus and fuzz-http). A crash fails it and keeps the input.
FUZZ_SECONDS ?= 600
fuzz: deps
	bash Tests/Fuzz/fuzz.sh $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS),--seconds $(FUZZ_SECONDS)) $(FUZZ_TARGETS)
	$(if $(FUZZ_TARGETS),,$(MAKE) --no-print-directory fuzz-bus)
	$(if $(FUZZ_TARGETS),,$(MAKE) --no-print-directory fuzz-http)

## fuzz-http: schemathesis against hrmd's HTTP API from web/openapi.json for FUZZ_SECONDS (default 600),
## with a manager's token: no server error, and every status, content type and body as documented
fuzz-http: build http-fuzz-venv
	bash Tests/HTTPFront/fuzz.sh --max-examples 2000 --seconds $(FUZZ_SECONDS)

## check-exports: every export file checked by its format's own validator (Tests/exports): the FHIR
## Bundle by fhir.resources (FHIR R4), with and without people; a workout's FIT file by Garmin's FIT
## SDK and fitdecode, its TCX by the TCX v2 schema (lxml); a workout's figures against a second
## implementation in numpy; a mock strap's ECG and acceleration as EDF+ (pyedflib), WFDB (wfdb),
## CSV and FHIR, each read back to the µV the strap sent; every example strip of the waveform writers' tests
## (EDF+ by pyedflib, EDF+D by Luna, WFDB by wfdb, FHIR by fhir.resources); uses the built hrmd, hrmctl and tests
check-exports: exports-venv
	timeout --kill-after=10 600 $(EXPORTS_VENV)/bin/python Tests/exports/test_fhir.py
	timeout --kill-after=10 600 $(EXPORTS_VENV)/bin/python Tests/exports/test_workout_files.py
	timeout --kill-after=10 600 $(EXPORTS_VENV)/bin/python Tests/exports/test_workout_figures.py
	timeout --kill-after=10 600 $(EXPORTS_VENV)/bin/python Tests/exports/test_ecg_files.py
	rm -rf $(WAVEFORM_DIR)
	HRMD_WAVEFORM_EXPORT_DIR=$(CURDIR)/$(WAVEFORM_DIR) timeout --kill-after=10 600 $(SWIFT) test --skip-build --filter WaveformExportTests
	@failed=0; for name in $(WAVEFORM_EXAMPLES); do \
		for check in "edf $$name.edf $$name.edf.expect.json" "wfdb $${name//-/_}.hea $$name.expect.json" \
			"csv $$name.csv $$name.expect.json" "fhir $$name.fhir.json $$name.expect.json"; do \
			set -- $$check; \
			if timeout --kill-after=10 120 $(EXPORTS_VENV)/bin/python Tests/exports/check_waveform_file.py --format $$1 \
				$(WAVEFORM_DIR)/$$2 --expect $(WAVEFORM_DIR)/$$3; then echo "ok $$1 $$2"; else failed=$$((failed + 1)); fi; \
		done; \
	done; [ $$failed = 0 ]

## The example strips the waveform writers' tests write (ECG and acceleration, with and without gaps,
## beyond 16 and 24 bits), each read back by its format's own reader in check-exports
WAVEFORM_EXAMPLES := ecg ecg-gaps acc acc-gaps ecg-wide acc-wide
WAVEFORM_DIR := .build/waveform-files

## exports-venv: the validators' venv (FHIR_RESOURCES_VERSION with the pydantic it needs, pinned) in
## .build/venv-exports; made once, from pip's cache when it can; fails with one line when PyPI cannot be reached
FHIR_RESOURCES_VERSION := 6.1.0
PYDANTIC_VERSION := 1.10.13
GARMIN_FIT_SDK_VERSION := 21.218.0
FITDECODE_VERSION := 0.11.0
LXML_VERSION := 6.1.3
NUMPY_VERSION := 2.2.6
PYEDFLIB_VERSION := 0.1.42
WFDB_VERSION := 4.3.1
LUNAPI_VERSION := 1.7.0
EXPORTS_VENV := .build/venv-exports
exports-venv:
	@if ! $(EXPORTS_VENV)/bin/python -c 'import fhir.resources as f, garmin_fit_sdk, fitdecode, lxml.etree as e, numpy, pyedflib, wfdb, lunapi, sys; sys.exit(f.__version__ != "$(FHIR_RESOURCES_VERSION)" or fitdecode.__version__ != "$(FITDECODE_VERSION)" or e.__version__ != "$(LXML_VERSION)" or numpy.__version__ != "$(NUMPY_VERSION)" or pyedflib.__version__ != "$(PYEDFLIB_VERSION)" or wfdb.__version__ != "$(WFDB_VERSION)")' 2>/dev/null; then \
		rm -rf $(EXPORTS_VENV) && /usr/bin/python3 -m venv $(EXPORTS_VENV) && \
		$(EXPORTS_VENV)/bin/pip install --quiet --disable-pip-version-check fhir.resources==$(FHIR_RESOURCES_VERSION) pydantic==$(PYDANTIC_VERSION) \
			garmin-fit-sdk==$(GARMIN_FIT_SDK_VERSION) fitdecode==$(FITDECODE_VERSION) lxml==$(LXML_VERSION) numpy==$(NUMPY_VERSION) \
			pyedflib==$(PYEDFLIB_VERSION) wfdb==$(WFDB_VERSION) lunapi==$(LUNAPI_VERSION) || \
		{ rm -rf $(EXPORTS_VENV); echo "exports-venv: cannot install the validators (fhir.resources, garmin-fit-sdk, fitdecode, lxml, numpy, pyedflib, wfdb, lunapi) from PyPI (is it reachable? pip's proxy settings?)" >&2; exit 1; }; \
	fi

## http-fuzz-venv: the venv of schemathesis (SCHEMATHESIS_VERSION, pinned) in .build/venv-http-fuzz; made once,
## from pip's cache when it can; fails with one line when PyPI cannot be reached
SCHEMATHESIS_VERSION := 4.32.5
HTTP_FUZZ_VENV := .build/venv-http-fuzz
http-fuzz-venv:
	@if [ "$$($(HTTP_FUZZ_VENV)/bin/schemathesis --version 2>/dev/null | grep -o '[0-9][0-9.]*$$')" != "$(SCHEMATHESIS_VERSION)" ]; then \
		rm -rf $(HTTP_FUZZ_VENV) && /usr/bin/python3 -m venv $(HTTP_FUZZ_VENV) && \
		$(HTTP_FUZZ_VENV)/bin/pip install --quiet --disable-pip-version-check schemathesis==$(SCHEMATHESIS_VERSION) || \
		{ rm -rf $(HTTP_FUZZ_VENV); echo "http-fuzz-venv: cannot install schemathesis $(SCHEMATHESIS_VERSION) from PyPI (is it reachable? pip's proxy settings?)" >&2; exit 1; }; \
	fi

## fuzz-bus: fuzz hrmd --serve through D-Bus as an unprivileged uid for FUZZ_SECONDS (default 600; root)
## (Tests/HealthService/test_bus_fuzz.py): every method and property, well and ill typed; prints
## its executions and findings (make test runs it for 30 s)
fuzz-bus: build
	HRMD_FUZZ_SECONDS=$(FUZZ_SECONDS) timeout --kill-after=10 $$(( $(FUZZ_SECONDS) + 600 )) /usr/bin/python3 Tests/HealthService/run.py -k fuzz

## check-bluetooth: hrmd against the real Bluetooth stack, in a qemu VM (root)
## Debian 12's kernel and bluetoothd, Bumble's virtual controller behind /dev/vhci, virtual straps on its air link (root:
## the image is built once with debootstrap, cached outside the repository). SCENARIOS picks some
## (name or name:ble / name:hci); logs and btmon captures stay in .build/real-bluetooth/out
check-bluetooth:
	timeout --kill-after=10 2400 /usr/bin/python3 Tests/RealBluetooth/run.py $(SCENARIOS)

## check-fuzz: a short smoke of every fuzz target from its seeds (part of make test)
check-fuzz:
	bash Tests/Fuzz/fuzz.sh --runs 20000

## check-bench-build: the debug build of the benchmarks' package, Benchmarks (runs nothing; not in make test,
## which builds the product only: make bench builds them in release)
check-bench-build:
	$(BENCH_SWIFT) build --package-path $(BENCH_PACKAGE) $(SWIFT_BUILD_FLAGS)

## soak: hrmd under load for SOAK_MINUTES (default 30), memory and losses watched (not in make test)
## 20 fake BLE straps dropping every few minutes and bluetoothd restarted twice, then 20 mock straps
## and hrmctl readers: memory and descriptors each minute, and what was sent against what was stored
SOAK_MINUTES ?= 30
soak: deps
	$(SWIFT) build --build-tests
	HRMD_SOAK_MINUTES=$(SOAK_MINUTES) timeout --kill-after=30 $$(( $(SOAK_MINUTES) * 2 * 60 + 600 )) \
		$(SWIFT) test --skip-build --filter SoakEndToEndTests

## demo: set up, build, run hrmd with mock straps into ./demo/hrmd.sqlite, show the readings
demo: build
	@mkdir -p $(DEMO_DIR) && rm -f $(DEMO_STORE) $(DEMO_STORE)-wal $(DEMO_STORE)-shm
	$(DEBUG_BIN)/hrmctl auth grant hrmd all --store $(DEMO_STORE)
	$(DEBUG_BIN)/hrmd --store $(DEMO_STORE) --sensor mock:hz=2 --sensor mock:location=wrist,bpm=75,hz=2 --duration 6
	$(DEBUG_BIN)/hrmctl samples --store $(DEMO_STORE)

## release: the release build, the Swift runtime linked in statically (.build/release)
release: deps
	$(SWIFT) build -c release --static-swift-stdlib $(SWIFT_BUILD_FLAGS) $(RELEASE_LINK_FLAGS)
	$(SWIFT) build -c release --static-swift-stdlib $(SWIFT_BUILD_FLAGS) $(RELEASE_LINK_FLAGS) --product hrmctl $(HRMCTL_LINK_FLAGS)

## bench-release: the release builds the benchmarks run: release, then the benchmarks' package (Benchmarks)
## hrmbench and stack-floor in Benchmarks/.build/release, the Swift runtime linked in statically as in release
bench-release: release
	$(BENCH_SWIFT) build -c release --static-swift-stdlib --package-path $(BENCH_PACKAGE) $(SWIFT_BUILD_FLAGS) $(RELEASE_LINK_FLAGS)
	$(BENCH_SWIFT) build -c release --static-swift-stdlib --package-path $(BENCH_PACKAGE) $(SWIFT_BUILD_FLAGS) $(RELEASE_LINK_FLAGS) \
		--product stack-floor $(HRMCTL_LINK_FLAGS)

## bench: the release builds and every benchmark with its peers (Benchmarks' hrmbench, timing .build/release)
bench: bench-release
	HRMD_BIN_DIR=$(RELEASE_BIN) $(BENCH_RELEASE_BIN)/hrmbench
	$(MAKE) --no-print-directory bench-live
	$(MAKE) --no-print-directory bench-mqtt
	$(MAKE) --no-print-directory bench-central
	$(MAKE) --no-print-directory bench-alerts
	$(MAKE) --no-print-directory bench-figures

## bench-alerts: how soon an alert reaches an MQTT client (hrmd's publisher) and the desktop (hrmctl notify) after the
## reading that completes its rule, 20 mock straps at 4 Hz, beside a Python peer on hrmctl watch (bench-out/alerts/summary.json)
bench-alerts: release
	HRMD_BIN_DIR=$(RELEASE_BIN) /usr/bin/python3 bench/alert-bench.py

## bench-figures: a day of 4 straps at 1 Hz replayed (release), which works out resting heart rate, SDNN and
## recovery as it stores, beside the peer a user would write (hrmctl export, then Python); times and agreement
bench-figures: release
	HRMD_BIN_DIR=$(RELEASE_BIN) /usr/bin/python3 bench/figures-bench.py --json .build/bench-figures.json

## bench-ecg: an hour of simulated ECG and a real one (MIT-BIH 208) at 130 Hz as PMD frames replayed (release): the
## store's bytes beside flac's and a logger's SQLite table, a 30-second strip from the HTTP API beside sqlite3, an
## hour's export (.build/bench-ecg.json); needs flac and the bench venv (neurokit2, scipy)
ECG_BENCH_VENV := .build/venv-bench-ecg
bench-ecg: release
	@if ! $(ECG_BENCH_VENV)/bin/python -c 'import neurokit2, scipy.misc' 2>/dev/null; then \
		rm -rf $(ECG_BENCH_VENV) && /usr/bin/python3 -m venv $(ECG_BENCH_VENV) && \
		$(ECG_BENCH_VENV)/bin/pip install --quiet --disable-pip-version-check neurokit2==0.2.12 scipy==1.11.4 || \
		{ rm -rf $(ECG_BENCH_VENV); echo "bench-ecg: cannot install neurokit2 and scipy from PyPI" >&2; exit 1; }; \
	fi
	HRMD_BIN_DIR=$(RELEASE_BIN) $(ECG_BENCH_VENV)/bin/python bench/ecg-bench.py --json .build/bench-ecg.json

## bench-live: the HTTP front's live stream: 20 mock straps at 4 Hz, 200 WebSocket clients, against a
## Python relay (bench/python_relay.py) in the same run: latency, CPU per 1000 frames, RSS (.build/bench-live.json)
bench-live: release
	HRMD_BIN_DIR=$(RELEASE_BIN) /usr/bin/python3 bench/live_bench.py --json .build/bench-live.json

## bench-service: only the store service's benchmarks: hrmd --serve on a private bus against its peers
## (hrmctl --store, queries in process, hrmd with no client). Sizes: HRMBENCH_SERVICE_DAYS (store, default 365),
## HRMBENCH_SERVICE_RUNS (hrmctl runs, 7), HRMBENCH_SERVICE_CALLS (QuerySamples calls, 2000),
## HRMBENCH_SERVICE_SECONDS (each ingestion run, 30)
bench-service: bench-release
	HRMD_BIN_DIR=$(RELEASE_BIN) $(BENCH_RELEASE_BIN)/hrmbench service

## bench-ble-vm: the BLE benchmark on the real Bluetooth stack, in the VM of check-bluetooth
## hrmd (release), the bleak logger and the C floor against 20 virtual straps through Debian's bluetoothd
## (HRMD_VM_BENCH_SECONDS each, default 60); figures in .build/real-bluetooth/out/bench.json
bench-ble-vm: release
	HRMD_BIN_DIR=$(RELEASE_BIN) /usr/bin/python3 Tests/RealBluetooth/run.py --bench

## bench-ble: the Python peer, a bleak logger, against 20 fake straps at 4 Hz for 60 s
bench-ble: deps
	bash bench/run_ble_bench.sh

## bench-mqtt: the MQTT publisher against its peer: hrmd (release) with 20 mock straps at 4 Hz publishing to a local
## mosquitto, and a paho-mqtt publisher fed by hrmctl watch on the same store; latency p50/p99 and CPU per 1000
## messages (MQTT_BENCH_SECONDS, default 30; figures in bench-out/mqtt/summary.json; not in make test)
bench-mqtt: release
	HRMD_BIN_DIR=$(RELEASE_BIN) /usr/bin/python3 bench/mqtt-bench.py

## bench-central: the sync into PostgreSQL (servers of its own): 10 gateways × 20 mock straps at 4 Hz against a
## Python peer (hrmctl watch → psycopg2 INSERTs) in the same run: lag, CPU; an hour offline caught up; bytes per
## sample and stats by day over a gym's month against a plain table (.build/bench-central.json; CENTRAL_BENCH_DAYS)
bench-central: release
	HRMD_BIN_DIR=$(RELEASE_BIN) /usr/bin/python3 bench/central-bench.py --json .build/bench-central.json

## bench-central-shape: the central store's samples in PostgreSQL (a server of its own, as uid 65534 when root):
## a plain table (the peer), rows partitioned by month with BRIN, and chunks with arrays, for a gym's month at 1 Hz
## and 20 straps at 4 Hz for 1 h; bytes per sample and query times (figures in .build/bench-central-shape.json;
## CENTRAL_SHAPE_DAYS, default 30; not in make bench)
bench-central-shape:
	/usr/bin/python3 bench/central-shape.py --json .build/bench-central-shape.json

## install: install hrmd and hrmctl with all they ship (honours PREFIX and DESTDIR)
## the release binaries, unit, sysusers/tmpfiles, udev rules, D-Bus policy, activation file and
## interface, polkit action and rules, example configuration, the unit's drop-in for --sensor hci
## (as a document to copy), man pages, shell completions and the web pages (share/hrmd/web)
install: release
	$(SWIFT) package generate-manual --configuration debug > /dev/null
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(USERUNITDIR) $(DESTDIR)$(LIBDIR)/sysusers.d $(DESTDIR)$(LIBDIR)/tmpfiles.d \
		$(DESTDIR)$(LIBDIR)/udev/rules.d $(DESTDIR)$(SYSCONFDIR)/hrmd $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d \
		$(DESTDIR)$(DBUSDIR)/system.d $(DESTDIR)$(DBUSDIR)/system-services $(DESTDIR)$(DBUSDIR)/interfaces \
		$(DESTDIR)$(POLKITDIR)/actions $(DESTDIR)$(POLKITDIR)/rules.d $(DESTDIR)$(DOCDIR)/hrmd.service.d \
		$(DESTDIR)$(WEBDIR)/static
	install -m 0755 $(RELEASE_BIN)/hrmd $(RELEASE_BIN)/hrmctl $(DESTDIR)$(BINDIR)/
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/hrmd.service.in > $(DESTDIR)$(UNITDIR)/hrmd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/hrmd.service
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/hrmd-notify.service.in > $(DESTDIR)$(USERUNITDIR)/hrmd-notify.service
	chmod 0644 $(DESTDIR)$(USERUNITDIR)/hrmd-notify.service
	install -m 0644 systemd/hci.conf $(DESTDIR)$(DOCDIR)/hrmd.service.d/hci.conf
	install -m 0644 systemd/flatpak-identity.conf $(DESTDIR)$(DOCDIR)/hrmd.service.d/flatpak-identity.conf
	install -m 0644 systemd/hrmd.sysusers $(DESTDIR)$(LIBDIR)/sysusers.d/hrmd.conf
	install -m 0644 systemd/hrmd.tmpfiles $(DESTDIR)$(LIBDIR)/tmpfiles.d/hrmd.conf
	install -m 0644 udev/60-hrmd.rules $(DESTDIR)$(LIBDIR)/udev/rules.d/60-hrmd.rules
	install -m 0644 dbus/org.hrmd.Health.conf $(DESTDIR)$(DBUSDIR)/system.d/org.hrmd.Health.conf
	install -m 0644 dbus/org.hrmd.Health.service $(DESTDIR)$(DBUSDIR)/system-services/org.hrmd.Health.service
	install -m 0644 dbus/org.hrmd.Health1.xml $(DESTDIR)$(DBUSDIR)/interfaces/org.hrmd.Health1.xml
	install -m 0644 polkit/org.hrmd.health.policy $(DESTDIR)$(POLKITDIR)/actions/org.hrmd.health.policy
	install -m 0644 polkit/50-hrmd.rules $(DESTDIR)$(POLKITDIR)/rules.d/50-hrmd.rules
	install -m 0644 systemd/hrmd.conf.example $(DESTDIR)$(SYSCONFDIR)/hrmd/hrmd.conf.example
	install -m 0644 $(WEB_TOP_FILES) $(DESTDIR)$(WEBDIR)/
	install -m 0644 $(wildcard web/static/*) $(DESTDIR)$(WEBDIR)/static/
	[ -e $(DESTDIR)$(SYSCONFDIR)/hrmd/hrmd.conf ] || install -m 0644 systemd/hrmd.conf.example $(DESTDIR)$(SYSCONFDIR)/hrmd/hrmd.conf
	$(DEBUG_BIN)/generate-manual-tool $(RELEASE_BIN)/hrmd --section 8 --output-directory $(DESTDIR)$(MANDIR)/man8
	$(DEBUG_BIN)/generate-manual-tool $(RELEASE_BIN)/hrmctl --section 1 --output-directory $(DESTDIR)$(MANDIR)/man1
	for tool in hrmd hrmctl; do \
		$(RELEASE_BIN)/$$tool --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$tool; \
		$(RELEASE_BIN)/$$tool --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_$$tool; \
		$(RELEASE_BIN)/$$tool --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/$$tool.fish; \
	done

## uninstall: remove what install put in place (hrmd.conf only when it is still the example)
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-cmp -s systemd/hrmd.conf.example $(DESTDIR)$(SYSCONFDIR)/hrmd/hrmd.conf && rm -f $(DESTDIR)$(SYSCONFDIR)/hrmd/hrmd.conf
	-rmdir $(DESTDIR)$(SYSCONFDIR)/hrmd 2>/dev/null
	-rmdir $(DESTDIR)$(WEBDIR)/static $(DESTDIR)$(WEBDIR) $(DESTDIR)$(PREFIX)/share/hrmd 2>/dev/null

## clean: remove the builds (.build, Benchmarks/.build) and the demo's store (demo)
clean:
	rm -rf .build $(BENCH_PACKAGE)/.build $(DEMO_DIR)
