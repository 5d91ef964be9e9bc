#!/usr/bin/env python3
"""The layer rules of docs/architecture.md, checked on every #include of the sources.

usage: check_layers.py REPO_ROOT

Each folder may include only from its own layer and the layers below it:
core < compiler/runtime < compiler/backends/{cpu,cuda} (never each other) < compiler (passes,
pipelines, analyses, Target) < views < app, with profiler beside compiler (it knows core only);
inside app: profiling < common (the session) < analysis (ablation, bisection), reports < walkthrough < cli,
gui.
The libraries link the same way (compiler/CMakeLists.txt), and tst_runtime_alone links the
runtime with nothing above it. Known breaks still being removed are listed in KNOWN with their
reason: a new break fails, and so does a listed one that no longer happens (take it off the
list). Prints each break and exits 1 on any.
"""
import os
import re
import sys

ROOT = sys.argv[1]
QT = re.compile(r"#include\s*<Q[A-Za-z]")
INCLUDE = re.compile(r'#include\s*"([^"]+)"')

# Folder prefixes to layer names; the first match applies.
LAYERS = [
    ("compiler/runtime/", "runtime"),
    ("compiler/backends/cpu/", "cpu"),
    ("compiler/backends/cuda/", "cuda"),
    ("compiler/", "compiler"),
    ("core/", "core"),
    ("profiler/", "profiler"),
    ("views/", "views"),
    ("app/profiling/", "profiling"),
    ("app/common/", "common"),
    ("app/analysis/", "analysis"),
    ("app/reports/", "reports"),
    ("app/walkthrough/", "walkthrough"),
    ("app/", "app"),
]
# What each layer may include.
ALLOWED = {
    "core": {"core"},
    "runtime": {"core", "runtime"},
    "cpu": {"core", "runtime", "cpu"},
    "cuda": {"core", "runtime", "cuda"},
    "compiler": {"core", "runtime", "cpu", "cuda", "compiler"},
    "profiler": {"core", "profiler"},
    "views": {"core", "runtime", "compiler", "profiler", "views"},
    "profiling": {"core", "runtime", "cpu", "cuda", "compiler", "profiler", "profiling"},
    "common": {"core", "runtime", "cpu", "cuda", "compiler", "profiler", "views", "profiling", "common"},
    "analysis": {"core", "runtime", "cpu", "cuda", "compiler", "profiler", "views", "profiling", "common", "analysis"},
    "reports": {"core", "runtime", "cpu", "cuda", "compiler", "profiler", "views", "profiling", "reports"},
    "walkthrough": {"core", "runtime", "cpu", "cuda", "compiler", "profiler", "views", "profiling", "common",
                    "analysis", "reports", "walkthrough"},
    "app": {"core", "runtime", "cpu", "cuda", "compiler", "profiler", "views", "profiling", "common", "analysis",
            "reports", "walkthrough", "app"},
}
NO_QT = ("core/", "compiler/", "profiler/", "app/cli/", "app/common/", "app/analysis/", "app/profiling/", "app/reports/",
         "app/walkthrough/")

# Breaks still being removed; each must still exist.
KNOWN = {}


def layer(path):
    return next((name for prefix, name in LAYERS if path.startswith(prefix)), None)


def sources():
    for top in ("core", "compiler", "profiler", "views", "app"):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".h", ".cpp", ".cu", ".cuh")):
                    path = os.path.join(folder, f)
                    yield os.path.relpath(path, ROOT), path


breaks, seen_known = [], set()
for rel, path in sources():
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if rel.startswith(NO_QT) and QT.search(text):
        breaks.append(f"{rel}: includes Qt")
    own = layer(rel)
    if not own:
        continue
    for included in INCLUDE.findall(text):
        theirs = layer(included)
        if theirs and theirs not in ALLOWED[own]:
            if (rel, included) in KNOWN:
                seen_known.add((rel, included))
            else:
                breaks.append(f"{rel}: includes {included} ({own} never uses {theirs})")
for gone in set(KNOWN) - seen_known:
    breaks.append(f"{gone[0]} no longer includes {gone[1]}: take it off KNOWN in tests/check_layers.py")
for b in breaks:
    print(b)
print(f"layers: {len(breaks)} break(s), {len(seen_known)} known")
sys.exit(1 if breaks else 0)
