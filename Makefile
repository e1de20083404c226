# The two commands of the README, plus a few helpers. Each target installs the
# Debian packages it needs (non-interactively, as root or through sudo) when
# they are missing, configures CMake and builds.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_GEN   = $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all demo test werror-builds test-asan fuzz bench deps clean configure

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@sh tools/install-deps.sh

# build/ is one tree for both README commands, configured once: `make demo`
# builds only what the demo runs (weft and the library), `make test` the rest
# in the same tree, so nothing is compiled twice. Warnings are not errors in
# build/: a user's or a packager's build must not stop on a newer compiler's
# new warning. `make test` proves the code warning-free in the -Werror trees
# beside build/ (WERROR_TREES, below) instead.
configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) $(CMAKE_GEN) \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo

$(BUILD)/weft: configure FORCE
	cmake --build $(BUILD) -j $(JOBS) --target weft

demo: $(BUILD)/weft
	@sh tools/demo.sh $(BUILD)/weft

# Besides build/ (gcc -O2, the suite's tree, built as users build it), make
# test builds in Release (-O3) with -DWEFT_WERROR=ON, beside build/:
# - build-release-gcc: every target (tests, benchmarks and fuzz replays too:
#   gcc's optimisers warn at -O3 where -O2 is silent, as in bench/chakra.c
#   and nccl_tuner_test.c before issue 29);
# - build-clang-o3: what is shipped (weft_shipped: the library, weft,
#   libweft_mpi.so, libweft_nccl_tuner.so). clang's warnings come from its
#   front end, before optimisation, so one clang tree covers -O2 and -O3.
# TREE:CC:TYPE:TARGET. Built beside the suite (`test`, below); a few minutes
# from scratch on 2 loaded cores, seconds when little changed.
WERROR_TREES := build-release-gcc:gcc:Release:all build-clang-o3:clang:Release:weft_shipped
werror_on = grep -q '^WEFT_WERROR:BOOL=ON' $(1)/CMakeCache.txt || cmake -S . -B $(1) -DWEFT_WERROR=ON >/dev/null

# The -Werror trees build beside the suite, at low CPU priority (nice 10):
# the suite waits on processes and sockets for about a third of its time
# on 2 cores, which the builds fill, and the tests keep the CPU when they
# want it (they are deterministic under load). The builds' output comes
# after the suite's; either failing fails `make test`.
test: all deps
	@rm -f $(BUILD)/werror-builds.log; \
	nice -n 10 $(MAKE) --no-print-directory werror-builds >$(BUILD)/werror-builds.log 2>&1 & wpid=$$!; \
	(cd $(BUILD) && ctest --output-on-failure -j $(JOBS)); rc=$$?; \
	wait $$wpid; wrc=$$?; cat $(BUILD)/werror-builds.log; \
	if [ $$wrc -ne 0 ]; then echo "make test: the -Werror builds failed (above)" >&2; fi; \
	[ $$rc -eq 0 ] && [ $$wrc -eq 0 ]

werror-builds: deps
	@for t in $(WERROR_TREES); do \
	    dir=$${t%%:*}; rest=$${t#*:}; cc=$${rest%%:*}; rest=$${rest#*:}; \
	    type=$${rest%%:*}; target=$${rest#*:}; \
	    test -f $$dir/CMakeCache.txt || CC=$$cc cmake -S . -B $$dir $(CMAKE_GEN) \
	        -DCMAKE_BUILD_TYPE=$$type -DWEFT_WERROR=ON >/dev/null || exit 1; \
	    $(call werror_on,$$dir) || exit 1; \
	    echo "== $$dir ($$cc, $$type, -Werror): $$target"; \
	    cmake --build $$dir -j $(JOBS) --target $$target || exit 1; \
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

bench: all
	@for b in $(BUILD)/bench_*; do echo "== $$b"; $$b || exit 1; done

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) build-release-gcc build-clang build-clang-o3

FORCE:
