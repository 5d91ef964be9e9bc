#!/usr/bin/env python3
"""The device kit's stages that need PyTorch, run by run.sh on the GPU machine.

  gpu_stages.py 3|4 --cli FUSESCOPE_CLI --out DIR [--cases a,b] [--budget SECONDS] [--max-autotune]
                [--self-test]
  gpu_stages.py compare-outputs OURS_DIR REFERENCE_DIR   (stage 2: two `run --output-dir` folders)
  gpu_stages.py export MODEL BATCH OUT.onnx               (stage 2: resnet50 at batch 1)
  gpu_stages.py goals-line SUMMARY_JSON                   (run.sh: every stage's goals in one line)
  gpu_stages.py compare-check COMPARE_JSON                (stage 2: `compare --json` of cpu/fp32,
                                                           cuda/fp32 and cuda/fp16)

Stage 3, CUPTI: resnet50 (random weights) exported by PyTorch at batch 1 and 32, each
profiled with `fusescope-cli profile --backend cuda`: the run stored, the HTML report and the
Perfetto trace written, every kernel checked to belong to a plan node, the profiler's
overhead set against its goals (at most 15% at batch 1, 5% at batch 32).

Stage 4, the benchmark: a case list fixed in advance (case_list: resnet50, vit_b_16 and a
BERT-base encoder with its own weights per layer, sequence 128; batch 32 in float16 and in
float32 with TF32 on both sides, batch 1 in strict float32), exported there by PyTorch. In
the same run, three alternating rounds of PyTorch eager, torch.compile (every mode at batch
32 float16, max-autotune with --max-autotune; reduce-overhead at batch 1), ONNX Runtime's CUDA and
TensorRT providers where this machine has them (the summary says when not), and
`fusescope-cli run --backend cuda`, each side timed device-resident (`--device-io`; IOBinding)
and host to host (the input copied in, the output out); peak device memory; kernels per run,
the largest GEMM's TFLOP/s against cuBLAS alone and the generated element-wise kernels' GB/s
against a device-to-device copy, from `fusescope-cli profile`.

Every stage 4 case feeds PyTorch and fusescope-cli the same input and compares the whole
output tensors (float32: max |ours - torch| within 1e-3 of the output's largest magnitude;
TF32 5e-3; float16 and bfloat16: 2e-2 and a cosine of at least 0.9995).

Correctness and goals are kept apart. A stage fails (exit 1) on an error or a wrong output;
its goals (stage 3's profiler overhead, stage 4's latency and memory against PyTorch) are
listed in DIR/stageN.json's "goals", each with its figure and target, and the summary's
first line says `GOALS k/n met` with every missed goal. A case that did not run (an error,
or not started within --budget seconds, which is not a failure) misses every goal it has.
Times are the median of the rounds' medians and the p90 of every sample; PyTorch's settings
are recorded. Each stage writes
DIR/stageN.json and DIR/stageN.txt after every case (status "incomplete" until the last, so a
run cut off by its lease keeps what it measured) and exits 0 (passed), 1 (failed) or 3
(skipped: no CUDA in this PyTorch). --self-test runs the plumbing on a tiny model on the CPU and the simulated
device, for CI, where there is no GPU.
"""
import argparse
import csv
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import time

STAGE_NAMES = {3: "CUPTI profiling", 4: "benchmark against PyTorch"}


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def build_model(torch, name):
    """The model (random weights, eval mode) and the shape of one input sample."""
    torch.manual_seed(0)
    if name in ("resnet50", "vit_b_16"):
        import torchvision
        model = getattr(torchvision.models, name)(weights=None).eval()
        if name == "vit_b_16":  # torchvision zeroes the classifier: every output would be 0 on both sides
            with torch.no_grad():
                model.heads.head.weight.normal_(0.0, 0.02)
                model.heads.head.bias.normal_(0.0, 0.02)
        return model, (3, 224, 224)
    if name == "bert_base":
        layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072,
                                                 activation="gelu", batch_first=True)
        return distinct_layers(torch, torch.nn.TransformerEncoder(layer, num_layers=12)).eval(), (128, 768)
    if name == "tiny_mlp":
        return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)).eval(), (64,)
    raise ValueError("unknown model " + name)


def distinct_layers(torch, encoder):
    """nn.TransformerEncoder deep-copies one layer, and the exporter stores identical weights
    once: the model would hold one layer's weights (1/12 of BERT-base's, which stay in L2).
    Each layer gets its own (tests/models/distinct_layers.py does the same for the tests)."""
    for layer in encoder.layers:
        for module in layer.modules():
            reset = getattr(module, "_reset_parameters", None) or getattr(module, "reset_parameters", None)
            if reset is not None and module is not layer:
                reset()
        with torch.no_grad():
            for norm in (layer.norm1, layer.norm2):
                norm.weight.normal_(1.0, 0.02)
                norm.bias.normal_(0.0, 0.02)
    return encoder


def export(torch, model, example, path):
    kwargs = dict(opset_version=17, input_names=["input"], output_names=["output"])
    try:
        torch.onnx.export(model, (example,), path, dynamo=False, **kwargs)
    except TypeError:  # a PyTorch from before the dynamo exporter
        torch.onnx.export(model, (example,), path, **kwargs)


def time_torch(torch, fn, x, iterations, warmup, device):
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    with torch.inference_mode():
        for _ in range(warmup):
            fn(x)
        sync()
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        times = []
        for _ in range(iterations):
            start = time.perf_counter()
            fn(x)
            sync()
            times.append((time.perf_counter() - start) * 1e3)
    peak = torch.cuda.max_memory_allocated() if device == "cuda" else 0
    return {"median_ms": statistics.median(times), "p90_ms": percentile(times, 0.9), "peak_bytes": peak,
            "samples_ms": times}


def alternating_rounds(contenders, rounds):
    """Each contender (name -> a function timing one round) once per round, in turn, so a slow
    spell of the machine falls on all of them; the median of the rounds' medians and the p90
    of every sample, with each round's median kept."""
    results = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, measure in contenders.items():
            results[name].append(measure())
    merged = {}
    for name, runs in results.items():
        medians = [r["median_ms"] for r in runs]
        samples = [t for r in runs for t in r.get("samples_ms", [])] or medians
        merged[name] = dict(runs[-1], median_ms=statistics.median(medians), p90_ms=percentile(samples, 0.9),
                            round_medians_ms=medians, peak_bytes=max(r.get("peak_bytes", 0) for r in runs))
        merged[name].pop("samples_ms", None)
    return merged


NPY_DESCR = {"float32": "<f4", "float16": "<f2"}
ONNX_TO_TORCH = {1: "float32", 10: "float16", 16: "bfloat16", 11: "float64", 7: "int64", 6: "int32"}


def save_npy(torch, tensor, path):
    """A tensor as a .npy file (version 1.0), without numpy: what `run --input` reads."""
    t = tensor.detach().to("cpu").contiguous()
    dtype = str(t.dtype).replace("torch.", "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        NPY_DESCR[dtype], "".join("%d, " % d for d in t.shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        try:
            f.write(t.numpy().tobytes())
        except Exception:  # a PyTorch without numpy
            f.write(bytes(t.untyped_storage()))


def parse_tensor_proto(path):
    """dims, data_type and raw_data of the TensorProto `run --output-dir` writes, read from the
    protobuf wire format (field 1 dims, 2 data_type, 9 raw_data): the GPU machine has no onnx."""
    data = open(path, "rb").read()

    def varints(buf):
        at = 0
        while at < len(buf):
            value, shift = 0, 0
            while True:
                byte = buf[at]
                at += 1
                value |= (byte & 0x7F) << shift
                shift += 7
                if byte < 0x80:
                    break
            yield value, at

    dims, dtype, raw, at = [], None, b"", 0
    while at < len(data):
        key, used = next(varints(data[at:at + 10]))
        at += used
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, used = next(varints(data[at:at + 10]))
            at += used
            if field == 1:
                dims.append(value)
            elif field == 2:
                dtype = value
        elif wire == 2:
            length, used = next(varints(data[at:at + 10]))
            chunk = data[at + used:at + used + length]
            at += used + length
            if field == 1:  # packed dims
                dims += [v for v, _ in varints(chunk)]
            elif field == 9:
                raw = chunk
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        else:
            raise ValueError("%s: wire type %d" % (path, wire))
    return dims, dtype, raw


def read_tensor_proto(torch, path):
    """The file's tensor as a torch tensor on the CPU."""
    dims, dtype, raw = parse_tensor_proto(path)
    if dtype not in ONNX_TO_TORCH:
        raise ValueError("%s: data type %s" % (path, dtype))
    t = torch.frombuffer(bytearray(raw), dtype=getattr(torch, ONNX_TO_TORCH[dtype])) if raw else torch.empty(0)
    return t.reshape(dims)


def read_tensor_values(path):
    """The file's values as Python floats, without torch or numpy (stage 2)."""
    _, dtype, raw = parse_tensor_proto(path)
    fmt = {1: "f", 10: "e", 11: "d", 7: "q", 6: "i"}.get(dtype)
    if fmt is None:
        raise ValueError("%s: data type %s" % (path, dtype))
    return list(struct.unpack("<%d%s" % (len(raw) // struct.calcsize(fmt), fmt), raw))


def compare_output_dirs(ours_dir, reference_dir, limit=1e-4):
    """Every output_N.pb of two `run --output-dir` folders, whole: the largest error within
    `limit` of the reference's largest magnitude. Returns (worst, problem or None)."""
    names = sorted(f for f in os.listdir(reference_dir) if f.endswith(".pb"))
    if not names or names != sorted(f for f in os.listdir(ours_dir) if f.endswith(".pb")):
        return None, "outputs %s against %s" % (sorted(os.listdir(ours_dir)), names)
    worst = 0.0
    for name in names:
        a, b = read_tensor_values(os.path.join(reference_dir, name)), read_tensor_values(os.path.join(ours_dir, name))
        if len(a) != len(b):
            return None, "%s: %d values against %d" % (name, len(b), len(a))
        scale = max([abs(x) for x in a if x == x] + [1e-30])
        for x, y in zip(a, b):
            error = 0.0 if x == y or (x != x and y != y) else abs(x - y) / scale
            worst = error if not error <= worst else worst  # a NaN error sticks
    return worst, None if worst <= limit else "largest error %.3g of the largest magnitude (limit %.0e)" % (worst, limit)


def compare_outputs(torch, ours, reference, dtype_name, tf32=False):
    """Whole tensors: the largest error against the reference's largest magnitude, and (for
    half types) the cosine between them."""
    a = reference.detach().to("cpu", torch.float64).flatten()
    b = ours.detach().to("cpu", torch.float64).flatten()
    limit = 2e-2 if dtype_name in ("float16", "bfloat16") else 5e-3 if tf32 else 1e-3
    result = {"limit": limit}
    if a.shape != b.shape:
        result.update(ok=False, why="%d elements against PyTorch's %d" % (b.numel(), a.numel()))
        return result
    if a.numel() and float(a.abs().max()) == 0.0:  # nothing to compare against: not a pass
        result.update(ok=False, why="PyTorch's output is all zeros, so the comparison says nothing")
        return result
    scale = max(float(a.abs().max()) if a.numel() else 0.0, 1e-30)
    error = float((a - b).abs().max()) / scale if a.numel() else 0.0
    error = float("inf") if error != error else error
    cosine = float(torch.dot(a, b) / max(float(a.norm() * b.norm()), 1e-300)) if a.numel() else 1.0
    result.update(max_rel_error=error, cosine=cosine)
    result["ok"] = error <= limit and (limit < 2e-2 or cosine >= 0.9995)
    if not result["ok"]:
        result["why"] = "max error %.3g of the largest magnitude (limit %.0e), cosine %.6f" % (error, limit, cosine)
    return result


def goal(name, figure, target, unit, met):
    """One goal of a case: its figure against its target; None as the figure: not measured."""
    return {"goal": name, "figure": figure, "target": target, "unit": unit, "met": bool(met) and figure is not None}


def run_cli(cli, args, env, timeout=300, stderr_lines=None):
    done = subprocess.run([cli] + args, capture_output=True, text=True, env=env, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["exit %d" % done.returncode])
    if stderr_lines is not None:
        stderr_lines.extend(done.stderr.splitlines())
    return done.stdout


def cudnn_routes(lines):
    """How many shapes took each cuDNN route (FUSESCOPE_CUDNN_LOG's lines on stderr), with the
    first reason each fallback gave: convolutions as an operation graph or the legacy call,
    attention fused or as GEMMs."""
    routes = {"conv_graph": 0, "conv_legacy": 0, "attention_fused": 0, "attention_gemms": 0, "why": []}
    for line in lines:
        if line.startswith("cuDNN attention "):
            key = "attention_fused" if ": fused, " in line else "attention_gemms"
        elif line.startswith("cuDNN "):
            key = "conv_graph" if ": operation graph, " in line else "conv_legacy"
        else:
            continue
        routes[key] += 1
        if key in ("conv_legacy", "attention_gemms") and len(routes["why"]) < 4:
            routes["why"].append(line[:300])
    return routes


def fusescope_run(cli, model_path, iterations, warmup, env, extra=()):
    logged = []
    out = run_cli(cli, ["run", model_path, "--backend", "cuda", "--iterations", str(iterations),
                        "--warmup", str(warmup), "--json"] + list(extra), dict(env, FUSESCOPE_CUDNN_LOG="1"),
                  stderr_lines=logged)
    j = json.loads(out)
    device = j.get("device", {})
    return {"median_ms": j["latency_ms"]["median"], "p90_ms": j["latency_ms"]["p90"],
            "cudnn_routes": cudnn_routes(logged),
            "samples_ms": j["latency_ms"].get("samples", []),
            "peak_bytes": device.get("peak_allocated_bytes", 0), "device": device.get("name", "?"),
            "steps_on_device": device.get("steps_on_device", 0),
            "cpu_fallbacks": len(device.get("cpu_fallbacks", [])),
            "cuda_graph_replayed": device.get("cuda_graph_replayed", False)}


def profile(cli, model_path, iterations, out_dir, env, extra=()):
    os.makedirs(out_dir, exist_ok=True)
    text = run_cli(cli, ["profile", model_path, "--backend", "cuda", "--iterations", str(iterations),
                         "--warmup", "3", "--csv", out_dir] + list(extra), env)
    # "overhead 9.9%", or "overhead within noise (measured 7.3%, while ...)"
    overhead = re.search(r"profiler overhead (?:within noise \(measured )?(-?[0-9.]+)%", text)
    latency = re.search(r"median ([0-9.]+) ms unprofiled, ([0-9.]+) ms profiled", text)
    with open(os.path.join(out_dir, "kernels.csv")) as f:
        kernels = [row for row in csv.DictReader(f) if row["kind"] == "kernel"]
    with open(os.path.join(out_dir, "nodes.csv")) as f:
        nodes = list(csv.DictReader(f))
    return {"overhead_percent": float(overhead.group(1)) if overhead else None,
            "unprofiled_ms": float(latency.group(1)) if latency else None,
            "profiled_ms": float(latency.group(2)) if latency else None,
            "kernels": len(kernels),
            "unattributed_kernels": sum(1 for k in kernels if k["node"] in ("", "-1")),
            "nodes": nodes}


def stage3(torch, args, env, device, dtype):
    cases, failures = [], []
    model_name = "tiny_mlp" if args.self_test else "resnet50"
    for batch in (1, 32):
        case = {"model": model_name, "batch": batch}
        cases.append(case)
        try:
            model, shape = build_model(torch, model_name)
            path = os.path.join(args.out, "models", "%s-b%d.onnx" % (model_name, batch))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            export(torch, model, torch.randn(batch, *shape), path)
            base = os.path.join(args.out, "stage3-%s-b%d" % (model_name, batch))
            result = profile(args.cli, path, 5 if args.self_test else 50, base + "-csv", env,
                             ["--store", os.path.join(args.out, "stage3-runs.fsdb"), "--report", base + ".html",
                              "--trace", base + ".json"])
            del result["nodes"]
            case.update(result)
            target = 15.0 if batch == 1 else 5.0
            case["overhead_goal_percent"] = target
            case["overhead_goal_met"] = result["overhead_percent"] is not None and result["overhead_percent"] <= target
            case["goals"] = [goal("profiler overhead", result["overhead_percent"], target, "%",
                                  case["overhead_goal_met"])]
            trace = json.load(open(base + ".json"))
            events = trace["traceEvents"] if isinstance(trace, dict) else trace
            case["trace_kernel_events"] = sum(1 for e in events if e.get("cat") == "kernel")
            case["report_bytes"] = os.path.getsize(base + ".html")
            if result["kernels"] == 0:
                failures.append("b%d: no kernels recorded" % batch)
            if result["unattributed_kernels"]:
                failures.append("b%d: %d kernels tied to no plan node" % (batch, result["unattributed_kernels"]))
        except Exception as e:  # one line per case; the stage goes on
            case["error"] = str(e)
            case["goals"] = [goal("profiler overhead", None, 15.0 if batch == 1 else 5.0, "%", False)]
            failures.append("b%d: %s" % (batch, e))
        args.checkpoint(cases)
    return cases, failures


def gemm_tflops(torch, m, k, n, dtype, device):
    a = torch.randn(m, k, device=device, dtype=dtype)
    b = torch.randn(k, n, device=device, dtype=dtype)
    t = time_torch(torch, lambda x: torch.matmul(x, b), a, 20, 5, device)
    return 2.0 * m * k * n / (t["median_ms"] / 1e3) / 1e12


def copy_gbps(torch, nbytes, device):
    src = torch.empty(nbytes // 4, device=device, dtype=torch.float32)
    dst = torch.empty_like(src)
    t = time_torch(torch, lambda x: dst.copy_(x), src, 20, 5, device)
    return 2.0 * nbytes / (t["median_ms"] / 1e3) / 1e9


ROUNDS = 3


# The stage's cases, fixed in advance so that one verifying run fits a lease (under 8 minutes
# on an H100 is the aim; a listed case not started within --budget is a miss of its goals):
# batch 32 in float16 and in float32 with TF32 on both sides, batch 1 in strict float32.
MODELS = ["resnet50", "vit_b_16", "bert_base"]
# Kernels per run: resnet50 at most 70, the transformers 10 per encoder layer (12 layers).
KERNEL_GOALS = {"resnet50": 70, "vit_b_16": 120, "bert_base": 120}


def case_list(self_test):
    if self_test:
        return [("tiny_mlp", 32, "float32", True), ("tiny_mlp", 1, "float32", False)]
    return ([(m, 32, "float16", False) for m in MODELS] + [(m, 32, "float32", True) for m in MODELS] +
            [(m, 1, "float32", False) for m in MODELS])


def compile_modes(batch, dtype_name, tf32, max_autotune):
    """torch.compile's modes a case is timed in: at batch 32 in float16 default and
    reduce-overhead, and max-autotune when asked (its search takes minutes per model, more than a
    lease holds beside the rest); reduce-overhead (CUDA graphs) at batch 1; none for TF32 (its
    goal is eager)."""
    if batch == 1:
        return ["reduce-overhead"]
    if tf32:
        return []
    return ["default", "reduce-overhead"] + (["max-autotune"] if max_autotune else [])


def torch_settings(torch, device, max_autotune):
    """PyTorch as the benchmark runs it: cuDNN's autotuner on; TF32 set per case (both kinds on
    for the TF32 cases, both off otherwise, so each side runs the same arithmetic); recorded."""
    if device == "cuda":
        torch.backends.cudnn.benchmark = True
    return {"version": torch.__version__, "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            "tf32": "per case: convolutions and matmuls both TF32 in the float32 batch-32 cases, both strict "
                    "otherwise (PyTorch's own default is TF32 convolutions, strict matmuls)",
            "rounds": ROUNDS,
            "torch_compile_modes": "default and reduce-overhead at batch 32 float16%s; reduce-overhead at batch 1" % (
                ", max-autotune" if max_autotune else " (max-autotune not timed: run.sh 4 --max-autotune)"),
            "timing": "each side both ways: device-resident (inputs and outputs on the device) and host to host "
                      "(the input copied in, the output out); goals use the device-resident figures"}


def set_tf32(torch, on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on
    return {"tf32_convolutions": bool(torch.backends.cudnn.allow_tf32),
            "tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32)}


def ort_contenders(path, x, batch, dtype_name, per_round, warmup, device):
    """ONNX Runtime's CUDA (and, at batch 32 in float16, TensorRT) execution providers on the
    same exported model, device-resident through IOBinding; ({}, why) when this machine lacks them."""
    try:
        import onnxruntime as ort
    except ImportError as e:
        return {}, "onnxruntime is not installed (%s)" % e
    available = ort.get_available_providers()
    wanted = [("ort cuda", "CUDAExecutionProvider", {})]
    if batch == 32 and dtype_name == "float16":
        wanted.append(("ort tensorrt", "TensorrtExecutionProvider", {"trt_fp16_enable": True}))
    missing = [p for _, p, _ in wanted if p not in available]
    contenders = {}
    for name, provider, options in wanted:
        if provider not in available or device != "cuda":
            continue
        session = ort.InferenceSession(path, providers=[(provider, options), "CUDAExecutionProvider"])
        binding = session.io_binding()
        numpy_type = {"float32": "float32", "float16": "float16"}[dtype_name]
        import numpy as np
        binding.bind_input(session.get_inputs()[0].name, "cuda", 0, getattr(np, numpy_type), list(x.shape), x.data_ptr())
        binding.bind_output(session.get_outputs()[0].name, "cuda")
        run = (lambda s, b: lambda _x: s.run_with_iobinding(b))(session, binding)
        contenders[name] = run
    why = ("this onnxruntime lacks " + ", ".join(missing) + " (it has " + ", ".join(available) + ")") if missing else ""
    return contenders, why


def kernels_per_run(csv_dir):
    with open(os.path.join(csv_dir, "kernels.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["kind"] == "kernel"]
    if not rows:
        return 0
    first = min(int(r["iteration"]) for r in rows)
    return sum(1 for r in rows if int(r["iteration"]) == first)


def case_goals(model_name, batch, dtype_name, tf32, figures):
    """The issue's goals for one case; a figure of None (not measured) is a miss."""
    f = figures
    if batch == 1:
        return [goal("latency against torch.compile reduce-overhead", f.get("vs_reduce_overhead"), 1.0, "x",
                     (f.get("vs_reduce_overhead") or 99) <= 1.0)]
    if tf32:
        return [goal("latency against eager, both TF32", f.get("vs_eager"), 1.0, "x", (f.get("vs_eager") or 99) <= 1.0),
                goal("peak memory against eager", f.get("memory"), 1.0, "x", (f.get("memory") or 99) <= 1.0)]
    compile_target = 1.0 if model_name == "resnet50" else 1.2
    kernels_target = KERNEL_GOALS.get(model_name, 120)
    return [goal("latency against torch.compile (best mode)", f.get("vs_compile"), compile_target, "x",
                 (f.get("vs_compile") or 99) <= compile_target),
            goal("latency against eager", f.get("vs_eager"), 0.8, "x", (f.get("vs_eager") or 99) <= 0.8),
            goal("kernels per run", f.get("kernels"), kernels_target, "", (f.get("kernels") or 1e9) <= kernels_target),
            goal("peak memory against eager", f.get("memory"), 1.0, "x", (f.get("memory") or 99) <= 1.0)]


def stage4(torch, args, env, device, _dtype):
    cases, failures = [], []
    args.settings = torch_settings(torch, device, args.max_autotune)
    chosen = case_list(args.self_test)
    if args.cases:
        chosen = [c for c in chosen if c[0] in args.cases.split(",")]
    iterations, warmup = (6, 1) if args.self_test else (99, 10)
    per_round = max(1, iterations // ROUNDS)
    deadline = time.monotonic() + args.budget
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    # Every listed case is in the summary from the start, each goal a miss until measured, so a
    # run cut off by its lease still lists what it did not reach.
    for model_name, batch, dtype_name, tf32 in chosen:
        cases.append({"model": model_name, "batch": batch, "dtype": dtype_name + (" TF32" if tf32 else ""),
                      "goals": case_goals(model_name, batch, dtype_name, tf32, {}),
                      "error": "not run: the kit was stopped before this case (run.sh 4 --cases %s)" % model_name})
    args.checkpoint(cases)
    for case, (model_name, batch, dtype_name, tf32) in zip(cases, chosen):
        if time.monotonic() > deadline:  # a miss of every goal it has, not a wrong answer
            case["error"] = "not run: the stage's time budget was spent (run.sh 4 --cases %s)" % model_name
            continue
        del case["error"]
        started = time.monotonic()
        try:
            case["torch_settings"] = set_tf32(torch, tf32)
            dtype = getattr(torch, dtype_name)
            model, shape = build_model(torch, model_name)
            model = model.to(device=device, dtype=dtype)
            x = torch.randn(batch, *shape, device=device, dtype=dtype)
            x_host = x.cpu().pin_memory() if device == "cuda" else x.clone()
            name = "%s-%s%s-b%d" % (model_name, dtype_name, "-tf32" if tf32 else "", batch)
            path = os.path.join(args.out, "models", name + ".onnx")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            export(torch, model, x, path)
            with torch.inference_mode():
                reference = model(x)
            x_file = os.path.join(args.out, "models", name + ".input.npy")
            save_npy(torch, x, x_file)
            outputs = os.path.join(args.out, "stage4-%s-outputs" % name)
            ours_flags = ["--input", "input=" + x_file] + (["--tf32"] if tf32 else [])

            def torch_round(fn, host=False):
                if host:
                    return lambda: time_torch(torch, lambda xh: fn(xh.to(device)).cpu(), x_host, per_round, warmup, device)
                return lambda: time_torch(torch, fn, x, per_round, warmup, device)

            contenders = {"eager": torch_round(model), "eager host": torch_round(model, host=True)}
            modes = compile_modes(batch, dtype_name, tf32, args.max_autotune) if hasattr(torch, "compile") and not args.self_test else []
            for mode in modes:
                contenders["compile " + mode] = torch_round(torch.compile(model, mode=None if mode == "default" else mode))
            ort_runs, case["onnxruntime"] = ort_contenders(path, x, batch, dtype_name, per_round, warmup, device)
            for label, run in ort_runs.items():
                contenders[label] = (lambda r: lambda: time_torch(torch, r, x, per_round, warmup, device))(run)
            contenders["fusescope"] = lambda: fusescope_run(args.cli, path, per_round, warmup, env,
                                                            ours_flags + ["--device-io", "--output-dir", outputs])
            contenders["fusescope host"] = lambda: fusescope_run(args.cli, path, per_round, warmup, env, ours_flags)
            timed = alternating_rounds(contenders, ROUNDS)
            sync()
            case["eager"], case["eager_host"] = timed["eager"], timed["eager host"]
            case["torch_compile_modes"] = {m: timed["compile " + m] for m in modes}
            case["torch_compile"] = min(case["torch_compile_modes"].values(), key=lambda t: t["median_ms"], default=None)
            if case["torch_compile"]:
                case["torch_compile_best_mode"] = min(modes, key=lambda m: timed["compile " + m]["median_ms"])
            for label in ort_runs:
                case[label.replace(" ", "_")] = timed[label]
            ours = case["fusescope"] = timed["fusescope"]
            case["fusescope_host"] = timed["fusescope host"]
            case["output"] = compare_outputs(torch, read_tensor_proto(torch, os.path.join(outputs, "output_0.pb")),
                                             reference, dtype_name, tf32=tf32)
            if not case["output"]["ok"]:
                failures.append("%s: output differs from PyTorch's: %s" % (case_label(case), case["output"]["why"]))
            figures = {"vs_eager": ours["median_ms"] / case["eager"]["median_ms"],
                       "memory": ours["peak_bytes"] / case["eager"]["peak_bytes"] if case["eager"]["peak_bytes"] else None}
            case["vs_eager"] = figures["vs_eager"]
            case["vs_eager_host"] = case["fusescope_host"]["median_ms"] / case["eager_host"]["median_ms"]
            if case["torch_compile"]:
                case["vs_compile"] = figures["vs_compile"] = ours["median_ms"] / case["torch_compile"]["median_ms"]
            if "reduce-overhead" in case["torch_compile_modes"]:
                figures["vs_reduce_overhead"] = ours["median_ms"] / case["torch_compile_modes"]["reduce-overhead"]["median_ms"]
            if batch == 32 or args.self_test:  # per kernel: the largest GEMM, the generated kernels, the count
                csv_dir = os.path.join(args.out, "stage4-%s-csv" % name)
                prof = profile(args.cli, path, 5 if args.self_test else 10, csv_dir, env, ["--tf32"] if tf32 else [])
                case["kernels_per_run"] = figures["kernels"] = kernels_per_run(csv_dir)
                gemms = [n for n in prof["nodes"] if re.search("MatMul|Gemm|Conv", n["op"]) and float(n["flops"]) > 0]
                if gemms:
                    top = max(gemms, key=lambda n: float(n["flops"]))
                    case["largest_gemm"] = {"node": top["name"], "op": top["op"], "tflops": float(top["gflops_per_s"]) / 1e3}
                    if "Conv" not in top["op"] and model_name == "bert_base":
                        case["largest_gemm"]["cublas_tflops"] = gemm_tflops(torch, batch * 128, 768, 3072, dtype, device)
                fused = [n for n in prof["nodes"] if n["op"].endswith("FusedElementwise")]
                if fused:
                    best = max(fused, key=lambda n: float(n["gb_per_s"]))
                    case["elementwise"] = {"node": best["name"], "gbps": float(best["gb_per_s"]),
                                           "copy_gbps": copy_gbps(torch, 64 << 20, device)}
            case["goals"] = case_goals(model_name, batch, dtype_name, tf32, figures)
        except Exception as e:
            case["error"] = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
            failures.append("%s: %s" % (case_label(case), case["error"]))
        case["seconds"] = round(time.monotonic() - started, 1)
        args.checkpoint(cases)
    return cases, failures


def case_label(c):
    return "%s b%d%s" % (c["model"], c["batch"], " " + c["dtype"] if "dtype" in c else "")


def goals_line(cases):
    """GOALS k/n met, then each missed goal with its figure."""
    goals = [(case_label(c), g) for c in cases for g in c.get("goals", [])]
    met = sum(1 for _, g in goals if g["met"])
    missed = ["%s %s %s (target %s%s)" % (label, g["goal"],
                                         "not measured" if g["figure"] is None else "%.3g%s" % (g["figure"], g["unit"]),
                                         g["target"], g["unit"]) for label, g in goals if not g["met"]]
    return "GOALS %d/%d met%s" % (met, len(goals), "; missed: " + "; ".join(missed) if missed else "")


def summary_text(stage, status, reason, cases):
    lines = [goals_line(cases),
             "stage %d, %s: %s%s" % (stage, STAGE_NAMES[stage], status, " (%s)" % reason if reason else "")]
    for c in cases:
        label = "  " + case_label(c)
        if "error" in c:
            lines.append("%s: %s" % (label, c["error"]))
        elif stage == 3:
            lines.append("%s: %.3f ms unprofiled, %.3f ms profiled, overhead %.1f%% (goal %.0f%%: %s), %d kernels, "
                         "%d unattributed" % (label, c["unprofiled_ms"] or -1, c["profiled_ms"] or -1,
                                              c["overhead_percent"] if c["overhead_percent"] is not None else -1,
                                              c["overhead_goal_percent"], "met" if c["overhead_goal_met"] else "missed",
                                              c["kernels"], c["unattributed_kernels"]))
        else:
            ours, eager, comp = c["fusescope"], c["eager"], c["torch_compile"]
            text = "%s: fusescope %.3f ms (p90 %.3f), eager %.3f ms (%.2fx)" % (
                label, ours["median_ms"], ours["p90_ms"], eager["median_ms"], c["vs_eager"])
            if comp:
                text += ", torch.compile %.3f ms (%s, %.2fx)" % (comp["median_ms"], c["torch_compile_best_mode"],
                                                               c["vs_compile"])
            for ort_name in ("ort_cuda", "ort_tensorrt"):
                if ort_name in c:
                    text += ", %s %.3f ms" % (ort_name.replace("_", " "), c[ort_name]["median_ms"])
            text += "; host to host %.3f ms vs eager's %.3f (%.2fx)" % (
                c["fusescope_host"]["median_ms"], c["eager_host"]["median_ms"], c["vs_eager_host"])
            text += ", peak %.1f MiB vs eager %.1f MiB" % (ours["peak_bytes"] / 2**20, eager["peak_bytes"] / 2**20)
            if "kernels_per_run" in c:
                text += ", %d kernels per run" % c["kernels_per_run"]
            if "largest_gemm" in c:
                g = c["largest_gemm"]
                text += "; largest GEMM %.1f TFLOP/s" % g["tflops"]
                if "cublas_tflops" in g:
                    text += " (cuBLAS alone %.1f)" % g["cublas_tflops"]
            if "elementwise" in c:
                text += "; element-wise %.0f GB/s (D2D copy %.0f)" % (c["elementwise"]["gbps"], c["elementwise"]["copy_gbps"])
            if "output" in c:
                o = c["output"]
                text += "; output %s PyTorch's (max error %.2g, cosine %.6f)" % (
                    "matches" if o["ok"] else "DIFFERS FROM", o.get("max_rel_error", float("nan")), o.get("cosine", float("nan")))
            if c.get("onnxruntime"):
                text += "; " + c["onnxruntime"]
            lines.append(text)
    if stage == 4:
        lines.append("  (median of %d alternating rounds' medians; first figures device-resident on both sides "
                     "(fusescope-cli run --device-io), then host to host; torch.compile: its best mode)" % ROUNDS)
    return "\n".join(lines) + "\n"


# The largest output error `compare` may find for a variant against cpu/fp32: the GPU in
# float32 matches the CPU (as bisect asks, no jump at 1e-3), float16 within its own rounding.
COMPARE_LIMITS = {"fp32": 1e-3, "fp16": 1e-2, "bf16": 5e-2}


def compare_check(path):
    """One line on an N-way compare's JSON, and whether every variant ran within its limit."""
    d = json.load(open(path))
    problems, parts = [], []
    for v in d["variants"]:
        precision = v["label"].split("/")[-1]
        parts.append("%s %.3g ms (x%.2f) error %.1e" % (v["label"], v["median_ms"], v["vs_baseline"], v["output_error"]))
        if v["label"] != d["baseline"] and v["output_error"] > COMPARE_LIMITS.get(precision, 1e-1):
            problems.append("%s's output error %.1e is over %.0e" % (v["label"], v["output_error"], COMPARE_LIMITS[precision]))
        if v["median_ms"] <= 0:
            problems.append(v["label"] + " was not timed")
    ran = sum(any(c["ran"] for c in row["variants"]) for row in d["rows"])
    line = "%d variants, %d of %d ONNX nodes ran: %s" % (len(d["variants"]), ran, len(d["rows"]), "; ".join(parts))
    return line, problems


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "compare-check":  # run.sh stage 2: COMPARE_JSON
        line, problems = compare_check(sys.argv[2])
        print(line + ("" if not problems else " -- " + "; ".join(problems)))
        return 0 if not problems else 1
    if len(sys.argv) == 4 and sys.argv[1] == "compare-outputs":  # run.sh stage 2: OURS REFERENCE
        worst, problem = compare_output_dirs(sys.argv[2], sys.argv[3])
        print("outputs within %.2g of the CPU's" % worst if problem is None else "outputs differ: " + problem)
        return 0 if problem is None else 1
    if len(sys.argv) == 3 and sys.argv[1] == "goals-line":  # run.sh: summary.txt's first line
        cases = [c for stage in json.load(open(sys.argv[2]))["stages"] for c in stage.get("cases", [])]
        line = goals_line(cases)
        print(line + (" (no stage with goals ran)" if line == "GOALS 0/0 met" else ""))
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == "export":  # run.sh stage 2: MODEL BATCH OUT.onnx
        import torch
        model, shape = build_model(torch, sys.argv[2])
        os.makedirs(os.path.dirname(os.path.abspath(sys.argv[4])), exist_ok=True)
        export(torch, model, torch.randn(int(sys.argv[3]), *shape), sys.argv[4])
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("stage", type=int, choices=[3, 4])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--cases", default="")
    parser.add_argument("--budget", type=float, default=420.0)
    parser.add_argument("--max-autotune", action="store_true")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ)
    status, reason, cases = "passed", "", []
    try:
        import torch
    except ImportError as e:
        torch, status, reason = None, "skipped", "PyTorch is not installed (%s)" % e
    device = "cpu"
    if torch is not None:
        if args.self_test:
            env["FUSESCOPE_DEVICE"] = "simulated"
        elif not torch.cuda.is_available():
            status, reason = "skipped", "this PyTorch sees no CUDA device"
        else:
            device = "cuda"
    args.checkpoint = lambda so_far: write_stage(args, "incomplete", "stopped before its last case", so_far)
    if status == "passed":
        run = stage3 if args.stage == 3 else stage4
        cases, failures = run(torch, args, env, device, None)
        if failures:
            status, reason = "failed", "; ".join(failures)[:2000]
    write_stage(args, status, reason, cases)
    return {"passed": 0, "failed": 1, "skipped": 3}[status]


def write_stage(args, status, reason, cases):
    """DIR/stageN.json and .txt as they stand: after every case, and once more at the end."""
    goals = [g for c in cases for g in c.get("goals", [])]
    with open(os.path.join(args.out, "stage%d.json" % args.stage), "w") as f:
        json.dump({"stage": args.stage, "name": STAGE_NAMES[args.stage], "status": status, "reason": reason,
                   "self_test": args.self_test, "goals_met": sum(1 for g in goals if g["met"]), "goals": len(goals),
                   "settings": getattr(args, "settings", None), "cases": cases}, f, indent=1)
    with open(os.path.join(args.out, "stage%d.txt" % args.stage), "w") as f:
        f.write(summary_text(args.stage, status, reason, cases))


if __name__ == "__main__":
    sys.exit(main())
