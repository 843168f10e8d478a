# hrmd — build, test, demo and benchmark.
#   make demo    set up, build, run hrmd with mock straps into ./demo/hrmd.sqlite, show the readings
#   make test    set up, build and run every test (unit, store, pipeline, end to end)
#   make bench   release build and the benchmarks with their peers

SHELL := /bin/bash
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := libsqlite3-dev sqlite3 libsystemd-dev libudev-dev libbluetooth-dev
DEMO_DIR := demo
DEMO_STORE := $(DEMO_DIR)/hrmd.sqlite
DEBUG_BIN := .build/debug
RELEASE_BIN := .build/release

.PHONY: all deps build test demo bench clean

all: build

## deps: install the Debian packages the build and tests need (only the missing ones)
deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: build
	@mkdir -p $(DEMO_DIR) && rm -f $(DEMO_STORE) $(DEMO_STORE)-wal $(DEMO_STORE)-shm
	$(DEBUG_BIN)/hrmctl auth grant hrmd all --store $(DEMO_STORE)
	$(DEBUG_BIN)/hrmd --store $(DEMO_STORE) --sensor mock:hz=2 --sensor mock:location=wrist,bpm=75,hz=2 --duration 6
	$(DEBUG_BIN)/hrmctl samples --store $(DEMO_STORE)

bench: deps
	$(SWIFT) build -c release --static-swift-stdlib
	HRMD_BIN_DIR=$(RELEASE_BIN) $(RELEASE_BIN)/hrmbench

clean:
	rm -rf .build $(DEMO_DIR)
