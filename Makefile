# Parley. `make test` and `make bench` install what is missing, then run.
SWIFT ?= swift
STRICT := -Xswiftc -warnings-as-errors
FUZZ_FLAGS := --scratch-path .build/fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld -Xswiftc -DPARLEY_FUZZ
FUZZ_TARGETS := stun rtp rtcp sdp sip ws signaling srtp ice wav jwt http red
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5

.PHONY: all deps build build-release run run-build check-run-build test layer-check apple-check unit-test bench fuzz fuzz-build fuzz-smoke clean

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build $(STRICT)

build-release: deps
	$(SWIFT) build -c release $(STRICT)

# parleyd on 127.0.0.1:8080 with its store in ./.parley; on a new store it prints a
# development application and the two `parley` commands that call between two users.
# Two builds: `swift build` honours only the last of several --product flags. They use
# build-release's flags, so after `make test` they find everything built.
run: run-build
	exec .build/release/parleyd --data-dir ./.parley --listen 127.0.0.1:8080

run-build: deps
	$(SWIFT) build -c release $(STRICT) --product parleyd
	$(SWIFT) build -c release $(STRICT) --product parley
	$(SWIFT) build -c release $(STRICT) --product parley

# After build-release, `make run`'s build must compile nothing: with other flags it once
# rebuilt the whole package (minutes on a fresh machine) after a test run.
check-run-build: build-release
	@out=$$($(MAKE) -s run-build 2>&1) || { echo "$$out"; exit 1; }; \
	if echo "$$out" | grep -q "Compiling"; then echo "$$out" | grep "Compiling" | head -5; \
		echo "make run would rebuild what make test built"; exit 1; fi; \
	echo "make run's build is up to date after build-release"

# The layer check first (seconds), then debug and release both build with no warnings
# (release catches data-race errors the debug build accepts), every test runs, then every
# fuzz target runs for a few seconds.
test: layer-check build apple-check build-release check-run-build unit-test fuzz-smoke

# The package graph and every import against the layer table in docs/architecture.md,
# after the check's own self-test (made-up packages that must pass or fail).
layer-check: deps
	python3 scripts/layer-check/test_layer_check.py
	python3 scripts/layer-check/layer_check.py

# The SDK's Apple adapters (Sources/ParleySDKApple, empty on Linux) type-checked against
# mirror frameworks, and the CallKit adapter's flows run over the CallKit mirror: a package of
# its own (AppleCheck/, docs/development.md) with its own scratch path, so the main build's
# cache stays valid. Build and test take the same flags: other flags rebuild everything.
APPLE_CHECK_FLAGS := --package-path AppleCheck --scratch-path .build/apple-check $(STRICT)
apple-check: deps
	$(SWIFT) build $(APPLE_CHECK_FLAGS)
	$(SWIFT) test $(APPLE_CHECK_FLAGS)

# Suites that run audio in real time or drive child processes with second-long timeouts
# (RealTimeMediaTests: loopback legs, aiortc, Chromium, parleyd calls, Python clients, push)
# run after the others, on their own, so CPU-heavy tests do not starve their 20 ms pacing;
# so do SoloTests, which count what the whole process holds (descriptors) or lower its descriptor limit,
# in a process of their own: threads left over from earlier suites (child-process readers, closing
# legs) open and close descriptors at any moment, which moved the edge's reserve under their feet.
unit-test: deps
	$(SWIFT) test $(STRICT) --skip RealTimeMediaTests --skip SoloTests
	$(SWIFT) test $(STRICT) --skip-build --no-parallel --filter RealTimeMediaTests
	$(SWIFT) test $(STRICT) --skip-build --no-parallel --filter SoloTests

# `install-deps.sh bench` also installs rtpengine, which the relay rows run beside ours, and
# espeak-ng, sox, pesq and pystoi for the speech rows. The server rows run the release
# parleyd built next to ParleyBench; the speech rows also the release parley softphone; the
# sip rows SIPp and Kamailio (installed for the tests already) beside parleyd's SIP gateway.
bench:
	@./scripts/install-deps.sh bench
	$(SWIFT) build -c release $(STRICT) --product parleyd
	$(SWIFT) build -c release $(STRICT) --product parley
	$(SWIFT) run -c release $(STRICT) ParleyBench

fuzz-build: deps
	$(SWIFT) build $(FUZZ_FLAGS) --product ParleyFuzz

# Long fuzz run: FUZZ_SECONDS per target, corpus grows in .build/fuzz-corpus.
fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p .build/fuzz-corpus/$$t; \
		echo "fuzzing $$t for $(FUZZ_SECONDS) s"; \
		.build/fuzz/debug/ParleyFuzz $$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 .build/fuzz-corpus/$$t Fuzz/corpus/$$t || exit 1; \
	done

# Short run of each target from the committed seeds, for `make test`.
fuzz-smoke: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p .build/fuzz-smoke/$$t; \
		.build/fuzz/debug/ParleyFuzz $$t -max_total_time=$(FUZZ_SMOKE_SECONDS) .build/fuzz-smoke/$$t Fuzz/corpus/$$t >.build/fuzz-smoke/$$t.log 2>&1 \
			|| { tail -40 .build/fuzz-smoke/$$t.log; echo "fuzz target $$t failed"; exit 1; }; \
		echo "fuzz $$t: $$(grep -E '^Done' .build/fuzz-smoke/$$t.log)"; \
	done

clean:
	rm -rf .build
