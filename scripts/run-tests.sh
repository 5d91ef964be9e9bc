#!/usr/bin/env bash
# README command 2: install, build, and run the whole test suite (every label); then the
# device and CLI tests of a build without the CUDA toolkit, the unit and CLI tests again under
# ASan + UBSan (every malformed model included), and the importer fuzzer for a bounded time
# under ASan + UBSan.
#   FUSESCOPE_FUZZ_RUNS=300000 (default) sets how many inputs the fuzzer tries; 0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test
jobs=$(nproc)

# QtTest and SKIP_RETURN_CODE report a skip as a pass: every build's skips are compared with
# tests/expected_skips.txt, and a skip it does not list fails the run.
run_ctest() {  # PRESET [CTEST ARGS] (its build folder: build, build-nocuda, build-asan)
  local preset=$1 dir=build
  shift
  [ "$preset" = dev ] || dir=build-$preset
  local junit="$PWD/$dir/ctest-junit.xml"
  ctest --preset "$preset" -j "$jobs" --output-junit "$junit" --test-output-size-passed 100000000 "$@"
  python3 tests/check_skips.py "$junit" tests/expected_skips.txt "$preset"
}

# One compiler cache for the builds: the CPU-only build compiles most objects exactly as the
# first one did (the toolkit's headers reach only the files that use them), so it takes them
# from here. Paths are hashed relative to the checkout, so build folders share entries.
export CCACHE_DIR=${CCACHE_DIR:-$PWD/build-ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
cached=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

cmake --preset dev "${cached[@]}" >/dev/null
cmake --build --preset dev -j "$jobs"
run_ctest dev

# Without the CUDA toolkit: the configuration, the engine and CLI (their objects come from the
# cache but for the three files that differ) and the tests of what differs (the device query,
# CUPTI, the CLI's device and run paths). The rest compiles exactly as above.
if [ -d /usr/local/cuda ] || command -v nvcc >/dev/null; then
  cmake --preset nocuda -DFUSESCOPE_GUI=OFF "${cached[@]}" >/dev/null
  no_toolkit_tests=(tst_cuda_backend tst_device_trace tst_profile_session tst_cli)
  cmake --build --preset nocuda -j "$jobs" --target fusescope-cli "${no_toolkit_tests[@]}"
  run_ctest nocuda -R "^($(IFS='|'; echo "${no_toolkit_tests[*]}"))\$"
fi

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
run_ctest asan

runs=${FUSESCOPE_FUZZ_RUNS:-300000}
if [ "$runs" != 0 ]; then
  bash tests/fuzz/run_fuzz.sh "$PWD" "$PWD/build-fuzz" "$PWD/build/tests/fixtures" "$runs"
fi
