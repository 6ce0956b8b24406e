# castline — the two commands a new machine needs: `make demo` and `make test`. Every target
# installs what is missing first (scripts/install-deps.sh).
SWIFT ?= swift
# Release builds link the Swift runtime into castline (--static-swift-stdlib): an installed binary
# needs no Swift toolchain, and a CLI run starts ~2 ms sooner (10 shared libraries fewer to map
# and relocate, one conformance section to scan). Plugins stay shared libraries with their own
# runtime: the plugin ABI is C, so nothing Swift crosses between the two (docs/architecture.md).
RELEASE = $(SWIFT) build -c release --static-swift-stdlib
FUZZ_SECONDS ?= 20

.PHONY: deps build test conformance check-protos protos plugin-memcheck sdk-test format-lint check-openapi openapi bench bench-fleet bench-senders bench-instructions bench-sinks bench-cast bench-logs bench-nearby bench-hub bench-mqtt bench-soak truth-audit field-day bench-wall fuzz-smoke demo deb deb-test clean

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build

# Builds and runs every test; Swift Testing's closing line carries the test count. SwiftNIO's
# strict mode turns work handed to an event loop that has shut down (dropped with a printed
# error otherwise) into a crash, so such a bug fails the run; a crash's backtrace shows only the
# crashed thread, without registers and images, so its last lines (all a CI summary keeps) are
# the frames that say where it happened. Then the conformance suite:
# unmodified pychromecast, catt and VLC against the built `castline sim`, and the built
# `castline` end to end (pytest; needs root for network namespaces); every castline process it
# starts inherits SWIFTNIO_STRICT=1 too.
test: deps
	$(SWIFT) build --build-tests
	SWIFTNIO_STRICT=1 SWIFT_BACKTRACE=enable=yes,interactive=no,threads=crashed,registers=none,images=none $(SWIFT) test --skip-build --no-parallel
	SWIFTNIO_STRICT=1 CASTLINE_BIN="$$($(SWIFT) build --show-bin-path)/castline" .venv/bin/python -m pytest -q -p no:cacheprovider Tests/Conformance

# Only the conformance suite (after a build).
conformance: deps
	$(SWIFT) build --product castline
	$(SWIFT) build --product CastlinePluginMQTTBridge
	SWIFTNIO_STRICT=1 CASTLINE_BIN="$$($(SWIFT) build --show-bin-path)/castline" .venv/bin/python -m pytest -q -p no:cacheprovider Tests/Conformance

# CI check that the committed generated protobuf code is current.
check-protos: deps
	@scripts/generate-protos.sh --check

protos: deps
	@scripts/generate-protos.sh

# CI check that docs/api/openapi.yaml is what the route table and its template make (the diff
# when not); `make openapi` writes it.
check-openapi: deps
	@scripts/generate-openapi.sh --check

openapi: deps
	@scripts/generate-openapi.sh

# Benchmarks (own package, release build): one JSON object per line.
# (The cached build plan is dropped first: SwiftPM misses files added to the root package.)
bench: deps
	rm -f Benchmarks/.build/*.yaml Benchmarks/.build/*/*/description.json
	$(SWIFT) run -c release --package-path Benchmarks castline-bench

# One simulator process with 1,000 devices behind avahi-daemon (network namespace; needs root).
bench-fleet: deps
	$(RELEASE) --product castline
	.venv/bin/python Benchmarks/sim-fleet.py --devices 1000 --bin "$$($(SWIFT) build -c release --show-bin-path)/castline"

# castline's sender framework on 100 and 1,000 simulated devices, and pychromecast on 100 of the
# same simulator in the same run: time to all-PLAYING, RSS per session, idle CPU, reconnect
# latency (network namespace; needs root).
bench-senders: deps
	$(RELEASE) --product castline
	rm -f Benchmarks/.build/*.yaml Benchmarks/.build/*/*/description.json
	$(SWIFT) build -c release --package-path Benchmarks --product castline-sender-bench
	.venv/bin/python Benchmarks/sender-fleet.py --bin "$$($(SWIFT) build -c release --show-bin-path)/castline" \
		--bench "$$($(SWIFT) build -c release --package-path Benchmarks --show-bin-path)/castline-sender-bench"

# Log-sink plugins loaded from their release .so: JSON sink records/s on one core (goal ≥ 1,000,000),
# journald sink caller cost while a private journald is saturated, and what it drops (needs root).
# castline cast vs catt: process start → PLAYING on the simulator, same URL, same run.
bench-cast: deps
	$(RELEASE) --product castline
	$(RELEASE) --product CastlinePluginMediaFormats
	.venv/bin/python Benchmarks/cast-vs-catt.py --bin "$$($(SWIFT) build -c release --show-bin-path)/castline"

# The hub: castline cast through the daemon vs catt, API cast vs pychromecast's play_media, 200
# clients on GET /v1/devices with 100 devices (wrk) (root: netns).
bench-hub: deps
	$(RELEASE) --product castline
	$(RELEASE) --product CastlinePluginMediaFormats
	.venv/bin/python Benchmarks/hub-api.py --bin "$$($(SWIFT) build -c release --show-bin-path)/castline"

# A fleet on one broker: 10 agents x 100 simulated devices, mosquitto; state propagation, command
# to PLAYING through MQTT, idle CPU (root: netns). docs/fleet.md#figures.
bench-mqtt: deps
	$(RELEASE) --product castline
	$(RELEASE) --product CastlinePluginMQTTBridge
	.venv/bin/python Benchmarks/mqtt-fleet.py --bin "$$($(SWIFT) build -c release --show-bin-path)/castline"

# The chaos soak: castline run on 1,000 simulated devices for 10 minutes under random faults, an
# isolated channel plugin segfaulting every minute (root: netns).
# The truth audit at full length (15 minutes): 20 TVs, four kinds of jobs and scripted faults;
# every view against the simulator's own, each TV against its job (docs/performance.md; CI runs
# 180 s of it in Tests/Conformance/test_truth_audit.py). Needs root for its network namespace.
truth-audit: deps
	$(RELEASE) --product castline
	$(RELEASE) --product CastlinePluginEchoChannelC
	$(RELEASE) --product CastlinePluginMQTTBridge
	.venv/bin/python Benchmarks/truth-audit.py --seconds 900 --bin "$$($(SWIFT) build -c release --show-bin-path)/castline"

# Video walls: 50 TVs with delays, jitter, first-frame times and drift (about 15 minutes).
bench-wall: deps
	$(RELEASE) --product castline
	$(RELEASE) --product CastlinePluginEchoChannelC
	.venv/bin/python Benchmarks/video-wall.py --bin "$$($(SWIFT) build -c release --show-bin-path)/castline"

field-day: deps
	$(RELEASE) --product castline
	$(RELEASE) --product CastlinePluginEchoChannelC
	$(RELEASE) --product CastlinePluginWebPages
	.venv/bin/python Benchmarks/field-day.py --both --receiver --bin "$$($(SWIFT) build -c release --show-bin-path)/castline"

bench-soak: deps
	$(RELEASE) --product castline
	$(RELEASE) --product CastlinePluginJSONSink
	$(RELEASE) --product TestPluginCrashesInChannel
	.venv/bin/python Benchmarks/chaos_soak.py --bin "$$($(SWIFT) build -c release --show-bin-path)/castline"

# castline logs query vs jq over 1 GB of JSON Lines built from a real run (root: netns).
bench-logs: deps
	$(RELEASE) --product castline
	$(RELEASE) --product CastlinePluginJSONSink
	.venv/bin/python Benchmarks/logs-query.py --bin "$$($(SWIFT) build -c release --show-bin-path)/castline"

# Nearby messages between two hosts (netns + veth + avahi each): found / lost latencies (root).
bench-nearby: deps
	$(RELEASE) --product castline
	.venv/bin/python Benchmarks/nearby-latency.py --bin "$$($(SWIFT) build -c release --show-bin-path)/castline"

# User-space instructions per decoded message and per JSON-sink record (valgrind): the figures
# that do not move with the VM's speed.
bench-instructions: deps
	rm -f Benchmarks/.build/*.yaml Benchmarks/.build/*/*/description.json
	$(SWIFT) build -c release --package-path Benchmarks --product castline-bench
	$(SWIFT) build -c release --package-path Benchmarks --product castline-sink-bench
	$(RELEASE) --product CastlinePluginJSONSink
	SWIFT=$(SWIFT) scripts/count-instructions.sh decode
	SWIFT=$(SWIFT) scripts/count-instructions.sh json-sink

bench-sinks: deps
	$(RELEASE) --product CastlinePluginJSONSink
	$(RELEASE) --product CastlinePluginJournaldSink
	rm -f Benchmarks/.build/*.yaml Benchmarks/.build/*/*/description.json
	$(SWIFT) build -c release --package-path Benchmarks --product castline-sink-bench
	"$$($(SWIFT) build -c release --package-path Benchmarks --show-bin-path)/castline-sink-bench" json "$$($(SWIFT) build -c release --show-bin-path)" /tmp
	$(RELEASE) --product castline
	"$$($(SWIFT) build -c release --package-path Benchmarks --show-bin-path)/castline-sink-bench" json-isolated "$$($(SWIFT) build -c release --show-bin-path)" /tmp
	Benchmarks/journald-sink.sh "$$($(SWIFT) build -c release --package-path Benchmarks --show-bin-path)/castline-sink-bench" "$$($(SWIFT) build -c release --show-bin-path)"

# Each libFuzzer target for FUZZ_SECONDS seconds (pluginabi: hostile plugin descriptors and host-service arguments).
fuzz-smoke: deps
	@scripts/fuzz.sh --build-only
	@for t in frame payload rules glob sim pluginjson config logline nearbytxt deviceauth pluginabi; do FUZZ_BUILT=1 scripts/fuzz.sh $$t $(FUZZ_SECONDS) || exit 1; done

# The Swift files in .swift-format-files against .swift-format (swift format lint --strict), in CI;
# a file joins the list once formatted (scripts/format-lint.sh --fix formats the listed ones).
format-lint:
	@SWIFT=$(SWIFT) scripts/format-lint.sh

# A channel plugin under valgrind's memcheck through the plugin harness (scripts/plugin-memcheck.sh):
# the two example plugins with their scripts, and a control plugin memcheck must catch; or
# PLUGIN=FILE [SCRIPT=FILE]. About 5 minutes; outside CI (docs/testing.md).
plugin-memcheck: deps
	scripts/plugin-memcheck.sh

# The plugin SDK against a release castline (the Swift runtime linked in): an out-of-tree Swift
# plugin built against SDK/ alone loads and passes the harness, and the example plugins pass
# their scripts (Tests/Conformance/test_plugin_harness.py, which CI runs on the debug build).
sdk-test: deps
	$(RELEASE) --product castline
	for p in CastlinePluginPingChannel CastlinePluginEchoChannelC TestPluginCrashesInChannel; do $(SWIFT) build --product $$p || exit 1; done
	SWIFTNIO_STRICT=1 CASTLINE_BIN="$$($(SWIFT) build -c release --show-bin-path)/castline" CASTLINE_PLUGIN_BUILD="$$($(SWIFT) build --show-bin-path)" \
		.venv/bin/python -m pytest -q -p no:cacheprovider Tests/Conformance/test_plugin_harness.py

# The Debian package: castline_<version>_amd64.deb (dpkg-deb, then lintian: no error), from release
# builds (castline with the Swift runtime linked in, the first-party plugins) — scripts/build-deb.sh.
DEB_PLUGINS = JSONSink MediaFormats JournaldSink AvahiDiscovery WebPages MQTTBridge
deb: deps
	$(RELEASE) --product castline
	@for p in $(DEB_PLUGINS); do $(RELEASE) --product CastlinePlugin$$p || exit 1; done
	SWIFT=$(SWIFT) scripts/build-deb.sh "$$($(SWIFT) build -c release --show-bin-path)" .build/deb

# The package installed with apt-get into a clean Debian 12 root (mmdebstrap, cached in
# .build/deb-root), then castline --version, sim, cast and doctor run inside it (root).
deb-test: deb
	scripts/deb-install-test.sh .build/deb/castline_*_amd64.deb

# Casts a sample to the built-in simulator and shows the live status view (scripts/demo.sh).
demo: deps
	$(SWIFT) build
	@scripts/demo.sh

clean:
	rm -rf .build .build-fuzz Benchmarks/.build Fuzz/.build
