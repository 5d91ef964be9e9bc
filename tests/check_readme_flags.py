#!/usr/bin/env python3
"""Every flag the README shows exists in the --help of the command it is shown with.

usage: check_readme_flags.py README.md CLI [GUI|none]

A command line in a code block (`fusescope-cli CMD ...`, its indented continuation lines,
or `fusescope ...`) is checked against that command's --help; a flag in running text is
checked against the command its code span names (`run --profile`), else against the
commands of the section it is in ("### Run": run). Flags of other programs (scripts,
run.sh, python) are left alone. Prints each flag that is missing; exits 1 if any is.
"""
import re
import subprocess
import sys

README, CLI = sys.argv[1], sys.argv[2]
GUI = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != "none" else None
COMMANDS = ["inspect", "dump", "export", "compile", "run", "profile", "ablate", "bisect", "compare", "walkthrough", "devices"]
SECTIONS = {  # section title (start) -> the commands its flags belong to
    "Inspect": ["inspect", "dump", "export", "devices"],
    "Compile": ["compile"], "Quantize": ["compile"], "Partition": ["compile"],
    "Run": ["run"], "Profile": ["profile"], "Ablate": ["ablate", "bisect", "compare"], "Walkthrough": ["walkthrough"], "The GUI": ["gui"],
}
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
helps = {}


def help_of(command):
    if command not in helps:
        if command == "gui":
            argv = [GUI, "--help"] if GUI else None
        else:
            argv = [CLI, command, "--help"]
        text = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout if argv else None
        helps[command] = text
    return helps[command]


checked = 0


def missing(flag, commands):
    global checked
    checked += 1
    texts = [help_of(c) for c in commands]
    if any(t is None for t in texts):
        return False  # the GUI is not built here
    if flag in ("--help", "--version"):
        return False
    return not any(re.search(re.escape(flag) + r"(?![\w-])", t) for t in texts)


def foreign(text):
    return re.search(r"\.sh\b|\.py\b|python|run\.sh|cmake|ctest|apt|dpkg|xvfb|bench_|ONEDNN|GOMP", text) is not None


problems = []
section, in_code, logical = None, False, []


def check_command_line(line, where):
    words = line.split()
    if not words:
        return
    if words[0].endswith("fusescope-cli") and len(words) > 1 and words[1] in COMMANDS:
        commands = [words[1]]
    elif words[0].endswith("/fusescope") or words[0] == "fusescope":
        commands = ["gui"]
    else:
        return
    for flag in FLAG.findall(line.split("#")[0]):
        if missing(flag, commands):
            problems.append(f"{where}: {flag} is not in `{' '.join(commands)} --help`: {line.strip()[:80]}")


with open(README) as f:
    lines = f.read().split("\n")
for number, line in enumerate(lines, 1):
    where = f"README.md:{number}"
    if line.startswith("#"):
        title = line.lstrip("#").strip()
        section = next((c for key, c in SECTIONS.items() if title.startswith(key)), None) if line.startswith("### ") else None
        continue
    if line.startswith("```"):
        if in_code:
            for start, text in logical:
                check_command_line(text, start)
            logical = []
        in_code = not in_code
        continue
    if in_code:
        if line.startswith(" ") and logical:
            logical[-1] = (logical[-1][0], logical[-1][1] + " " + line.strip())
        else:
            logical.append((where, line))
        continue
    for span in re.findall(r"`([^`]+)`", line):
        if foreign(span) or not FLAG.search(span):
            continue
        words = span.split()
        if words[0] in COMMANDS:
            commands = [words[0]]
        elif words[0] == "fusescope-cli" and len(words) > 1 and words[1] in COMMANDS:
            commands = [words[1]]
        elif words[0] == "fusescope":
            commands = ["gui"]
        elif section:
            commands = section
        else:
            continue
        for flag in FLAG.findall(span):
            if missing(flag, commands):
                problems.append(f"{where}: {flag} is not in `{' '.join(commands)} --help`: `{span}`")
for p in problems:
    print(p)
print(f"README flags: {checked} checked, {len(problems)} missing from --help")
if checked < 50:  # the parser lost its way: a check that checks nothing must not pass
    print("README flags: fewer than 50 flags found; the README's layout changed?")
    sys.exit(1)
sys.exit(1 if problems else 0)
