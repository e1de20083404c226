# The two commands of the README, plus a few helpers. Each target installs the
# Debian packages it needs (non-interactively, as root or through sudo) when
# they are missing, configures CMake and builds.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_GEN  := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all demo test werror-builds test-asan fuzz bench deps clean

all: $(BUILD)/weft

deps:
	@sh tools/install-deps.sh

# Warnings are errors (WEFT_WERROR) only for the test targets: a user's or a
# packager's build must not stop on a newer compiler's new warning. WERROR is
# ON inside `make test` (target-specific, so its prerequisites see it too) and
# in test-asan's tree; a tree configured without it is switched on.
WERROR     ?= OFF
werror_on = grep -q '^WEFT_WERROR:BOOL=ON' $(1)/CMakeCache.txt || cmake -S . -B $(1) -DWEFT_WERROR=ON >/dev/null

$(BUILD)/weft: deps FORCE
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) $(CMAKE_GEN) \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=$(WERROR)
	@if [ $(WERROR) = ON ]; then $(call werror_on,$(BUILD)); fi
	cmake --build $(BUILD) -j $(JOBS)

demo: $(BUILD)/weft
	@sh tools/demo.sh $(BUILD)/weft

# Besides the suite's own build (gcc -O2), make test proves the library, the
# weft command, libweft_mpi.so and libweft_nccl_tuner.so warning-free where
# packagers build them: gcc -O3 (Release) in build-release-gcc, clang -O2 and
# -O3 in build-clang and build-clang-o3. Built before the suite; about 30 s each from scratch on 2
# loaded cores, seconds when little changed.
WERROR_TREES := build-release-gcc:gcc:Release build-clang:clang:RelWithDebInfo \
                build-clang-o3:clang:Release

test: WERROR = ON
test: $(BUILD)/weft werror-builds
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

werror-builds: deps
	@for t in $(WERROR_TREES); do \
	    dir=$${t%%:*}; rest=$${t#*:}; cc=$${rest%%:*}; type=$${rest#*:}; \
	    test -f $$dir/CMakeCache.txt || CC=$$cc cmake -S . -B $$dir $(CMAKE_GEN) \
	        -DCMAKE_BUILD_TYPE=$$type -DWEFT_WERROR=ON >/dev/null || exit 1; \
	    $(call werror_on,$$dir) || exit 1; \
	    echo "== $$dir ($$cc, $$type, -Werror): the library, weft, libweft_mpi.so, libweft_nccl_tuner.so"; \
	    cmake --build $$dir -j $(JOBS) --target weft_shipped || exit 1; \
	done

test-asan: deps
	@test -f $(ASAN_BUILD)/CMakeCache.txt || cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) \
	    -DCMAKE_BUILD_TYPE=Debug -DWEFT_SANITIZE=ON -DWEFT_WERROR=ON
	@$(call werror_on,$(ASAN_BUILD))
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
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) build-release-gcc build-clang build-clang-o3

FORCE:
