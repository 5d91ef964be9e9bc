#!/usr/bin/env bash
# The HTML report and the walkthrough handout as a person opens them: fusescope-cli profile
# --report and walkthrough -o on the sample, then headless Chromium loads each file (no
# network) and we read back the DOM it built and a screenshot (left in OUT_DIR for people
# to look at).
#   report_renders.sh FUSESCOPE_CLI MODEL OUT_DIR
set -euo pipefail
cli=$1 model=$2 out=$3
mkdir -p "$out"
"$cli" profile "$model" --iterations 3 --report "$out/report.html" > "$out/profile.txt"
profile_dir=$(mktemp -d)
trap 'rm -rf "$profile_dir"' EXIT
chrome=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
        --disable-component-update --disable-sync --user-data-dir="$profile_dir")
timeout 120 "${chrome[@]}" --dump-dom "file://$out/report.html" > "$out/report.dom.html" 2> "$out/chromium.log"
fail() { echo "report_renders: $1 (see $out)" >&2; exit 1; }
dom="$out/report.dom.html"
for section in "Pipeline" "Graph, coloured by share of run time" "Top nodes" "Top kernels" "Graph breaks" "Memory" "Roofline" "Software"; do
  grep -q "<h2>$section" "$dom" || fail "section '$section' missing from the rendered page"
done
[ "$(grep -o '<svg' "$dom" | wc -l)" -ge 3 ] || fail "fewer than three pictures (graph, memory, roofline)"
grep -q 'profiler overhead' "$dom" || fail "no overhead figure"
grep -q 'ai.fusescope::' "$dom" || fail "no fused node in the top nodes"
if grep -qE 'src="http|href="http' "$dom"; then fail "the report reaches for the network"; fi
timeout 120 "${chrome[@]}" --window-size=1280,2000 --screenshot="$out/report.png" "file://$out/report.html" >> "$out/chromium.log" 2>&1
[ -s "$out/report.png" ] || fail "no screenshot"
echo "report renders: $out/report.png"

# The walkthrough: ten chapters, each with its figures, charts drawn, nothing fetched.
"$cli" walkthrough "$model" -o "$out/walkthrough.html" 2> "$out/walkthrough.log"
timeout 120 "${chrome[@]}" --dump-dom "file://$out/walkthrough.html" > "$out/walkthrough.dom.html" 2>> "$out/chromium.log"
dom="$out/walkthrough.dom.html"
[ "$(grep -o '<h2 id="chapter-' "$dom" | wc -l)" -eq 10 ] || fail "the walkthrough page does not show ten chapters"
[ "$(grep -o '<h3>This model</h3>' "$dom" | wc -l)" -eq 10 ] || fail "a walkthrough chapter has no figures"
[ "$(grep -o '<svg' "$dom" | wc -l)" -ge 6 ] || fail "fewer than six charts in the walkthrough"
grep -q 'Roofline of the compiled graph' "$dom" || fail "no roofline in the walkthrough"
if grep -qE 'src="http|href="http|<script' "$dom"; then fail "the walkthrough reaches for the network or runs scripts"; fi
# Read as a handout: each chapter asks before it answers, figures under words, not schema keys.
[ "$(grep -o 'Predict first:' "$dom" | wc -l)" -ge 8 ] || fail "fewer than eight chapters ask a question first"
if grep -qE '<th>[a-z0-9_]+_(ms|us|bytes|count|second|fraction|time|runs)</th>|<th>schema</th>' "$dom"; then
  fail "a raw JSON key is a heading"
fi
timeout 120 "${chrome[@]}" --window-size=1200,9000 --screenshot="$out/walkthrough.png" "file://$out/walkthrough.html" >> "$out/chromium.log" 2>&1
[ -s "$out/walkthrough.png" ] || fail "no walkthrough screenshot"
echo "walkthrough renders: $out/walkthrough.png"
# Printed (A4, the answers at the end).
timeout 120 "${chrome[@]}" --no-pdf-header-footer --print-to-pdf="$out/walkthrough.pdf" "file://$out/walkthrough.html" \
  >> "$out/chromium.log" 2>&1
[ "$(head -c 5 "$out/walkthrough.pdf")" = "%PDF-" ] || fail "the walkthrough does not print to PDF"
[ "$(grep -ac '/Type /Page\b' "$out/walkthrough.pdf")" -ge 5 ] || fail "the printed walkthrough has fewer than five pages"
echo "walkthrough prints: $out/walkthrough.pdf"
