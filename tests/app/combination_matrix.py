#!/usr/bin/env python3
"""Every command, with every option that changes what it does, over every fixture model.

usage: combination_matrix.py CLI GUI|none FIXTURE_DIR SAMPLE_MODEL WORK_DIR

Each invocation must end with exit 0; exit 2 with exactly one "error: ..." line on stderr
only where expected_refusals.txt (beside this script) lists the model, the command and the
words of the error; never a signal, never a hang (a time limit per command), never another
code. A listed refusal that no longer happens fails too, so the list stays exact. CUDA
commands run on the simulated device (FUSESCOPE_DEVICE=simulated), and `run --backend cuda`
must write the CPU backend's outputs for the same seeded inputs.
Prints one line per failure and a count per command; exits 1 when anything failed.
The models: the hand-built fixtures (good/*.onnx, good/external), the exporter-style ones
(styles/*.onnx) and the bundled sample. Options that only pick a file name are run once per
model with each output flag (-o, --dump-dir, --json, --explain) rather than all products.
"""
import concurrent.futures
import fnmatch
import glob
import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import onnx
from onnx import numpy_helper

CLI, GUI, FIXTURES, SAMPLE, WORK = sys.argv[1:6]
TIME_LIMIT = 300

models = sorted(glob.glob(os.path.join(FIXTURES, "good", "*.onnx")))
models += sorted(glob.glob(os.path.join(FIXTURES, "good", "external", "*.onnx")))
models += sorted(glob.glob(os.path.join(FIXTURES, "styles", "*.onnx")))
models.append(SAMPLE)

# (name, argv after the model); {out} is a per-invocation folder.
compile_bases = {
    "O2": [],
    "tp2": ["--tp", "2"],
    "pp2": ["--pp", "2", "--microbatches", "2"],
    "fp16": ["--quantize", "fp16"],
    "int8": ["--quantize", "int8", "--calibration-samples", "4"],
}
outputs = {
    "plain": [],
    "dump": ["--dump-dir", "{out}/dump"],
    "o": ["-o", "{out}/compiled.onnx"],
    "json": ["--json"],
    "explain": ["--explain"],
}
commands = [("inspect", [CLI, "inspect"], []), ("inspect --json", [CLI, "inspect"], ["--json"])]
for level in ("O0", "O1", "O3"):
    commands.append((f"compile --pipeline {level}", [CLI, "compile"], ["--pipeline", level, "--verify"]))
commands.append(("compile --quantize bf16", [CLI, "compile"], ["--quantize", "bf16"]))
commands.append(("compile int8 --threads 1", [CLI, "compile"], ["--quantize", "int8", "--calibration-samples", "4",
                                                               "--threads", "1"]))
commands.append(("compile int8 --per-channel --reduce-range o", [CLI, "compile"],
                 ["--quantize", "int8", "--calibration-samples", "4", "--per-channel", "--reduce-range",
                  "-o", "{out}/compiled.onnx"]))
commands.append(("compile --dump-self-contained", [CLI, "compile"], ["--dump-dir", "{out}/dump", "--dump-self-contained"]))
for base, base_args in compile_bases.items():
    for out, out_args in outputs.items():
        commands.append((f"compile {base} {out}", [CLI, "compile"], base_args + out_args))
commands += [
    ("run", [CLI, "run"], ["--output-dir", "{out}/outputs"]),
    ("run --json --pipeline O0", [CLI, "run"], ["--json", "--pipeline", "O0", "--iterations", "1"]),
    # The simulated device is slow: one timed run (the plain run above keeps the automatic count).
    ("run --backend cuda", [CLI, "run"], ["--backend", "cuda", "--iterations", "1", "--output-dir", "{out}/cuda"]),
    ("run --backend cuda --tf32 --device-io", [CLI, "run"],
     ["--backend", "cuda", "--tf32", "--device-io", "--iterations", "2", "--output-dir", "{out}/cuda_tf32"]),
    ("profile --backend cuda --tf32", [CLI, "profile"], ["--backend", "cuda", "--tf32", "--iterations", "2",
                                                         "--warmup", "0", "--trace", "{out}/trace.json"]),
    ("walkthrough", [CLI, "walkthrough"], ["--json", "-o", "{out}/walk.html"]),
    ("walkthrough --threads 1", [CLI, "walkthrough"], ["--threads", "1", "--chapters", "2,4", "--json"]),
    ("walkthrough --calibration-samples 8", [CLI, "walkthrough"], ["--calibration-samples", "8", "--chapters", "8", "--json"]),
    ("walkthrough --iterations 3 --warmup 0", [CLI, "walkthrough"],
     ["--iterations", "3", "--warmup", "0", "--chapters", "2,10", "--json"]),
    ("walkthrough --backend cuda --pipeline O1", [CLI, "walkthrough"],
     ["--backend", "cuda", "--pipeline", "O1", "--chapters", "4,9", "--json"]),
    ("profile", [CLI, "profile"], ["--iterations", "2", "--warmup", "0", "-o", "{out}/runs.fsdb",
                                   "--trace", "{out}/trace.json", "--report", "{out}/report.html"]),
    # Ablation times every variant: one round of one run keeps the matrix short.
    ("ablate --json", [CLI, "ablate"], ["--rounds", "1", "--runs-per-round", "1", "--warmup", "0", "--json"]),
    ("ablate --cumulative --pipeline O1 --threads 1", [CLI, "ablate"],
     ["--cumulative", "--pipeline", "O1", "--threads", "1", "--rounds", "1", "--runs-per-round", "1", "--warmup", "0",
      "--html", "{out}/ablation.html", "--csv", "{out}/ablation.csv"]),
    ("ablate --backend cuda --passes", [CLI, "ablate"],
     ["--backend", "cuda", "--passes", "conv-bn-fusion,fold-constants", "--rounds", "1", "--runs-per-round", "1",
      "--warmup", "0"]),
    ("bisect cpu/fp16", [CLI, "bisect"], ["--candidate", "cpu/fp16"]),
    ("bisect cuda/fp32 --json", [CLI, "bisect"], ["--candidate", "cuda/fp32", "--json", "--threshold", "1e-4"]),
    ("compare --json --sort error", [CLI, "compare"], ["--variants", "cpu/fp32,cpu/fp16,cuda/fp32", "--iterations", "1",
                                                    "--warmup", "0", "--json", "--sort", "error"]),
    # A variant's own pipeline after '@' (the others take --pipeline's).
    ("compare --baseline --csv --top --rounds 0 (a variant @O1)", [CLI, "compare"],
     ["--variants", "cpu/fp32@O1,cpu/bf16", "--baseline", "cpu/bf16", "--iterations", "1", "--csv", "{out}/compare.csv",
      "--top", "3", "--rounds", "0"]),
    ("bisect cpu/int8 --no-inside", [CLI, "bisect"], ["--candidate", "cpu/int8", "--no-inside", "--pipeline", "O1",
                                                      "--jump", "4"]),
]
if GUI != "none":
    for name, extra in (("screenshot", []), ("screenshot --pass imported", ["--pass", "imported"]),
                        ("screenshot --compare", ["--compare"]), ("screenshot --run", ["--run"]),
                        ("screenshot --palette dark --run", ["--palette", "dark", "--run", "--dock", "timeline"])):
        commands.append((name, [GUI], ["--screenshot", "{out}/shot.png"] + extra))




def model_name(model):
    return "sample" if model == SAMPLE else os.path.relpath(model, FIXTURES)


def load_refusals(path):
    """expected_refusals.txt: MODEL<TAB>COMMAND-PATTERN<TAB>WORDS OF THE ERROR  # why"""
    entries = []
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].rstrip()
        if not line:
            continue
        model, pattern, words = [part.strip() for part in line.split("\t") if part.strip()]
        entries.append((model, pattern, words))
    return entries


REFUSALS = load_refusals(os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected_refusals.txt"))


def expected_refusal(name, model, error):
    for entry in REFUSALS:
        m, pattern, words = entry
        if m == model_name(model) and fnmatch.fnmatchcase(name, pattern) and words in error:
            return entry
    return None


def sequence_outputs(model):
    """The output files (output_N.pb) that hold sequences: the graph output's type says so
    (the bytes cannot: a float TensorProto also parses as a SequenceProto of tensors)."""
    try:
        outputs = onnx.load(model, load_external_data=False).graph.output
    except Exception:  # noqa: BLE001 - unreadable models have no outputs to compare
        return set()
    return {f"output_{i}.pb" for i, o in enumerate(outputs) if o.type.HasField("sequence_type")}


def read_output(path, is_sequence):
    """An output file's arrays: one for a TensorProto, each element of a SequenceProto."""
    data = open(path, "rb").read()
    if is_sequence:
        sequence = onnx.SequenceProto()
        sequence.ParseFromString(data)
        return [numpy_helper.to_array(t) for t in sequence.tensor_values]
    return [numpy_helper.to_array(onnx.load_tensor_from_string(data))]


def outputs_differ(cuda_dir, cpu_dir, sequences, limit=1e-4):
    """The CUDA run's outputs against the CPU's: relative `limit` per element (1e-4; TF32's
    10-bit mantissa, 1e-2), floor 1% of the largest."""
    names = sorted(f for f in os.listdir(cpu_dir) if f.endswith(".pb"))
    if not names or names != sorted(f for f in os.listdir(cuda_dir) if f.endswith(".pb")):
        return f"outputs {sorted(os.listdir(cuda_dir))} against the CPU's {names}"
    pairs = []
    for name in names:
        wants = read_output(os.path.join(cpu_dir, name), name in sequences)
        gots = read_output(os.path.join(cuda_dir, name), name in sequences)
        if len(wants) != len(gots):
            return f"{name}: a sequence of {len(gots)} against the CPU's {len(wants)}"
        pairs += [(name, w, g) for w, g in zip(wants, gots)]
    for name, want, got in pairs:
        if want.dtype != got.dtype or want.shape != got.shape:
            return f"{name}: {got.dtype}{list(got.shape)} against the CPU's {want.dtype}{list(want.shape)}"
        if want.dtype.kind not in "fiub":
            continue
        a, b = want.astype(np.float64), got.astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(b)
        finite = np.abs(a[np.isfinite(a)])
        floor = max(0.01 * (finite.max() if finite.size else 0.0), 1e-30)
        error = np.where(both_nan | (a == b), 0.0, np.abs(a - b) / np.maximum(np.abs(a), floor))
        worst = float(np.nan_to_num(error, nan=np.inf).max()) if error.size else 0.0
        if not worst <= limit:
            return f"{name}: worst relative error {worst:.3g} against the CPU backend (limit {limit:g})"
    return None


checked = {}


def checker_accepts(model):
    """Whether ONNX's checker (this python-onnx's IR version) accepts the model as given."""
    if model not in checked:
        try:
            m = onnx.load(model)
            onnx.checker.check_model(m)
            checked[model] = m.ir_version <= onnx.IR_VERSION
        except Exception:  # noqa: BLE001
            checked[model] = False
    return checked[model]


cpu_runs = {}  # model -> (outputs folder, exit status): one CPU run per model for every CUDA command
cpu_runs_lock = threading.Lock()


def cpu_outputs(model, env):
    with cpu_runs_lock:
        entry = cpu_runs.setdefault(model, [threading.Lock(), None, len(cpu_runs)])
    with entry[0]:
        if entry[1] is None:
            folder = os.path.join(WORK, "cpu", f"{entry[2]:05d}")
            shutil.rmtree(folder, ignore_errors=True)
            cpu = subprocess.run([CLI, "run", model, "--iterations", "1", "--output-dir", folder],
                                 stdin=subprocess.DEVNULL, capture_output=True, timeout=TIME_LIMIT, env=env)
            entry[1] = (folder, cpu.returncode)
        return entry[1]


def check(job):
    index, model, (name, prefix, args) = job
    out = os.path.join(WORK, f"{index:05d}")
    os.makedirs(out, exist_ok=True)
    argv = prefix + [model] + [a.replace("{out}", out) for a in args]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", FUSESCOPE_DEVICE="simulated")
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIME_LIMIT, env=env)
        written = os.path.join(out, "compiled.onnx")
        if p.returncode == 0 and os.path.exists(written) and checker_accepts(model):
            try:  # what compile writes, ONNX's own checker accepts
                onnx.checker.check_model(onnx.load(written), full_check=True)
            except Exception as e:  # noqa: BLE001 - any refusal is the finding
                return name, model, f"the ONNX checker refuses the compiled model: {str(e).splitlines()[0]}", None
        cuda_out = next((d for d in ("cuda", "cuda_tf32") if os.path.isdir(os.path.join(out, d))), None)
        if p.returncode == 0 and cuda_out:
            cpu_dir, cpu_status = cpu_outputs(model, env)
            if cpu_status != 0:
                return name, model, f"the CPU run to compare with exits {cpu_status}", None
            differ = outputs_differ(os.path.join(out, cuda_out), cpu_dir, sequence_outputs(model),
                                    1e-2 if cuda_out == "cuda_tf32" else 1e-4)
            if differ:
                return name, model, differ, None
    except subprocess.TimeoutExpired:
        return name, model, f"hung (over {TIME_LIMIT} s)", None
    finally:
        shutil.rmtree(out, ignore_errors=True)
    err = p.stderr.decode("utf-8", "replace")
    # Progress lines rewrite themselves with \r: only the last state of each line counts.
    lines = [line.split("\r")[-1] for line in err.split("\n")]
    errors = [line for line in lines if line.startswith("error:")]
    if p.returncode < 0:
        return name, model, f"killed by signal {-p.returncode}: {err.strip()[-300:]}", None
    if p.returncode == 0:
        return name, model, None, None
    if p.returncode != 2:
        return name, model, f"exit {p.returncode}: {err.strip()[-300:]}", None
    if len(errors) != 1:
        return name, model, f"exit 2 with {len(errors)} error lines: {err.strip()[-300:]}", None
    entry = expected_refusal(name, model, errors[0])
    if entry is None:
        return name, model, f"refused, and expected_refusals.txt does not list it: {errors[0][:300]}", None
    return name, model, None, entry


jobs = [(i, m, c) for i, (m, c) in enumerate((m, c) for m in models for c in commands)]
os.makedirs(WORK, exist_ok=True)
failures = []
per_command = {}
used = set()
refused = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    for name, model, problem, entry in pool.map(check, jobs):
        ok, bad = per_command.get(name, (0, 0))
        per_command[name] = (ok + (problem is None), bad + (problem is not None))
        if entry:
            used.add(entry)
            refused += 1
        if problem:
            failures.append(f"FAIL {name} {model_name(model)}: {problem}")
# A listed refusal of a command and model this run tried that did not happen: the list is stale.
tried = {(name, model_name(model)) for model in models for name, _, _ in commands}
for entry in REFUSALS:
    m, pattern, words = entry
    applies = any(mm == m and fnmatch.fnmatchcase(n, pattern) for n, mm in tried)
    if applies and entry not in used:
        failures.append(f"FAIL expected_refusals.txt: {m} '{pattern}' no longer refuses with '{words}': remove the line")
for line in failures:
    print(line)
for name, (ok, bad) in per_command.items():
    print(f"{name:32s} {ok:3d} ok {bad:3d} failed")
print(f"{len(jobs)} invocations over {len(models)} models, {refused} expected refusals, {len(failures)} failed")
sys.exit(1 if failures else 0)
