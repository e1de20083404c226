# The two commands of the README, plus a few helpers. Each target installs the
# Debian packages it needs (non-interactively, as root or through sudo) when
# they are missing, configures CMake and builds.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_GEN  := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all demo test test-asan fuzz bench deps clean

all: $(BUILD)/weft

deps:
	@sh tools/install-deps.sh

$(BUILD)/weft: deps FORCE
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

demo: $(BUILD)/weft
	@sh tools/demo.sh $(BUILD)/weft

test: $(BUILD)/weft
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	@test -f $(ASAN_BUILD)/CMakeCache.txt || cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) \
	    -DCMAKE_BUILD_TYPE=Debug -DWEFT_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --output-on-failure -j $(JOBS)

fuzz: deps
	@test -f $(FUZZ_BUILD)/CMakeCache.txt || CC=clang cmake -S . -B $(FUZZ_BUILD) $(CMAKE_GEN) \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_FUZZ=ON
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

bench: $(BUILD)/weft
	@for b in $(BUILD)/bench_*; do echo "== $$b"; $$b || exit 1; done

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)

FORCE:
