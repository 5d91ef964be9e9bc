#!/usr/bin/env python3
"""The layer rules of ARCHITECTURE.md, checked on every #include of the sources.

usage: check_layers.py REPO_ROOT

Each folder may include only from the layers below it (core < compiler < runtime < backends;
profiler beside compiler; views above both; app above all). Known breaks still being
removed are listed in KNOWN with their reason: a new break fails, and so does a listed one
that no longer happens (take it off the list). Prints each break and exits 1 on any.
"""
import os
import re
import sys

ROOT = sys.argv[1]
QT = re.compile(r"#include\s*<Q[A-Za-z]")
INCLUDE = re.compile(r'#include\s*"([^"]+)"')

# (folder prefix, forbidden include prefixes). The first matching folder applies.
RULES = [
    ("compiler/backends/cpu/", ["compiler/backends/cuda/", "profiler/", "views/", "app/"]),
    ("compiler/backends/cuda/", ["compiler/backends/cpu/", "profiler/", "views/", "app/"]),
    ("compiler/backends/", ["profiler/", "views/", "app/"]),
    ("compiler/runtime/", ["compiler/backends/", "profiler/", "views/", "app/"]),
    ("compiler/", ["compiler/backends/", "profiler/", "views/", "app/"]),
    ("core/", ["compiler/", "profiler/", "views/", "app/"]),
    ("profiler/", ["compiler/", "views/", "app/"]),
    ("views/", ["app/", "compiler/backends/"]),
]
NO_QT = ("core/", "compiler/", "profiler/", "app/cli/", "app/common/")

# Breaks the execution-provider work (issue 56) removes; each must still exist.
KNOWN = {
    ("compiler/runtime/executor.cpp", "compiler/backends/cuda/device.h"): "the executor owns CUDA Graph capture",
    ("compiler/runtime/control_flow.cpp", "compiler/backends/cpu/cpu_common.h"): "If/Loop/Scan use the CPU helpers",
}


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
    rule = next((r for r in RULES if rel.startswith(r[0])), None)
    if not rule:
        continue
    for included in INCLUDE.findall(text):
        if any(included.startswith(p) for p in rule[1]):
            if (rel, included) in KNOWN:
                seen_known.add((rel, included))
            else:
                breaks.append(f"{rel}: includes {included} ({rule[0]} never uses it)")
for gone in set(KNOWN) - seen_known:
    breaks.append(f"{gone[0]} no longer includes {gone[1]}: take it off KNOWN in tests/check_layers.py")
for b in breaks:
    print(b)
print(f"layers: {len(breaks)} break(s), {len(seen_known)} known")
sys.exit(1 if breaks else 0)
