#!/usr/bin/env python3
"""Fails on a skip nobody expected.

usage: check_skips.py JUNIT_XML EXPECTED_SKIPS BUILD

QtTest exits 0 when a test function calls QSKIP, so CTest reports a pass; a test CTest
itself skips (SKIP_RETURN_CODE) is a pass in most summaries too. This reads CTest's JUnit
file (`ctest --output-junit`, with `--test-output-size-passed` large enough to keep every
line), collects every QtTest SKIP line and every test CTest did not run, and compares them
with EXPECTED_SKIPS: lines of

    BUILD  TEST  WHAT  # why

where BUILD is the preset (dev, nocuda, asan) or *, TEST a CTest name pattern and WHAT a shell
pattern over "function(data tag)" of a QtTest skip, or "-" for a test CTest did not run. Prints each skip with its reason; exits 1 on any skip the file does not list.
"""
import fnmatch
import re
import sys
import xml.etree.ElementTree as ET

junit, expected_file, build = sys.argv[1:4]

expected = []
for line in open(expected_file, encoding="utf-8"):
    text, _, why = line.partition("#")
    parts = text.split()
    if not parts:
        continue
    if len(parts) != 3:
        sys.exit(f"{expected_file}: expected BUILD TEST WHAT, got: {line.strip()}")
    if fnmatch.fnmatchcase(build, parts[0]):
        expected.append((parts[1], parts[2], why.strip()))

SKIP = re.compile(r"^SKIP\s+:\s+\w+::(\S+\(.*?\))\s?(.*)$")
skips = []  # (test, what, message)
for case in ET.parse(junit).getroot().iter("testcase"):
    test = case.get("name")
    if case.get("status") == "notrun" or case.find("skipped") is not None:
        skipped = case.find("skipped")
        skips.append((test, "-", skipped.get("message", "") if skipped is not None else "not run"))
    out = case.findtext("system-out") or ""
    for line in out.splitlines():
        m = SKIP.match(line)
        if m:
            skips.append((test, m.group(1), m.group(2)))

unexpected = []
used = set()
for test, what, message in skips:
    match = next((e for e in expected if fnmatch.fnmatchcase(test, e[0]) and fnmatch.fnmatchcase(what, e[1])), None)
    if match:
        used.add(match)
        print(f"skipped as expected: {test} {what} ({match[2] or message})")
    else:
        unexpected.append(f"UNEXPECTED SKIP: {test} {what}: {message}")
for e in expected:
    if e not in used:
        print(f"note: {e[0]} {e[1]} is listed for '{build}' but was not skipped; remove it if it runs for good")
for line in unexpected:
    print(line)
print(f"{len(skips)} skips, {len(unexpected)} unexpected")
sys.exit(1 if unexpected else 0)
