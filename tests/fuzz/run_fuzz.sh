#!/usr/bin/env bash
# Builds the importer fuzzer with clang (ASan + UBSan), replays every fixture (good and
# malformed) and every ONNX conformance model through it, then fuzzes for a bounded time from those seeds.
#   run_fuzz.sh SOURCE_DIR BUILD_DIR FIXTURE_DIR SECONDS
set -euo pipefail
src=$1 build=$2 fixtures=$3 seconds=$4
cmake -S "$src" -B "$build" -G Ninja -DFUSESCOPE_FUZZ=ON -DFUSESCOPE_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
cmake --build "$build" --target fuzz_import
corpus="$build/corpus"
rm -rf "$corpus" && mkdir -p "$corpus"
find "$fixtures" -name '*.onnx' -size -2M -exec cp {} "$corpus/" \;
cp "$src/resources/models/sample.onnx" "$corpus/"
# ONNX's conformance models: every operator, with subgraphs, sequences and optionals.
i=0
for m in $(find /usr/share/libonnx-testdata/data -name model.onnx 2>/dev/null); do
  i=$((i + 1)); cp "$m" "$corpus/conformance_$i.onnx"
done
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Replay: each seed once, under the sanitizers.
"$build/tests/fuzz/fuzz_import" "$corpus"/*.onnx 2>&1 | tail -3
# Explore: new inputs go to a scratch folder, the seeds stay as they are.
mkdir -p "$build/found"
"$build/tests/fuzz/fuzz_import" "$build/found" "$corpus" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 2>&1 | tail -15
echo "fuzz: no crash in ${seconds}s"
