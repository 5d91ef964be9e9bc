#!/usr/bin/env bash
# Builds the importer fuzzer with clang (ASan + UBSan), replays every fixture (good and
# malformed) and every ONNX conformance model through it, then fuzzes for a bounded time from those seeds.
#   run_fuzz.sh SOURCE_DIR BUILD_DIR FIXTURE_DIR RUNS [SEED]
# A fixed seed and a fixed number of runs make CI's run the same inputs every time, so a
# green run stays green; explore further locally with more runs or another seed.
set -euo pipefail
src=$1 build=$2 fixtures=$3 runs=$4 seed=${5:-20261122}
cmake -S "$src" -B "$build" -G Ninja -DFUSESCOPE_FUZZ=ON -DFUSESCOPE_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
cmake --build "$build" --target fuzz_import
corpus="$build/corpus"
rm -rf "$corpus" && mkdir -p "$corpus"
find "$fixtures" -name '*.onnx' -size -2M -exec cp {} "$corpus/" \;
cp "$src/resources/models/sample.onnx" "$src"/tests/fuzz/regressions/*.onnx "$corpus/"
# ONNX's conformance models: every operator, with subgraphs, sequences and optionals.
i=0
for m in $(find /usr/share/libonnx-testdata/data -name model.onnx 2>/dev/null); do
  i=$((i + 1)); cp "$m" "$corpus/conformance_$i.onnx"
done
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Replay: each seed once, under the sanitizers.
"$build/tests/fuzz/fuzz_import" "$corpus"/*.onnx 2>&1 | tail -3
# Explore: new inputs go to a scratch folder, the seeds stay as they are.
rm -rf "$build/found" && mkdir -p "$build/found"
"$build/tests/fuzz/fuzz_import" "$build/found" "$corpus" -runs="$runs" -seed="$seed" -timeout=10 \
  -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 2>&1 | tail -15
echo "fuzz: no crash in $runs runs (seed $seed)"
