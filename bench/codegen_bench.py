#!/usr/bin/env python3
"""Fusion compiler speed: tessel next to XLA:CPU (jax) and a copy, in one run.

For each case (examples/gelu.hlo and bench/codegen/*.hlo) this runs

  * `tessel run CASE --repeat N --threads T` (and, for cases with bf16/f16
    arrays, once more with `--excess-precision`, f32 between the ops; XLA:CPU
    in jax 0.10.2 rounds like tessel's default, see the comparison printed
    after the table): the
    median kernel time, GB/s, tessel's copy of the same bytes over the same
    threads, and the compile time tessel reports (HLO to callable kernels);
  * the same computation written in jax, `jax.jit` on the CPU, same shapes,
    dtypes and input distribution (uniform in [-3, 3), as tessel's random
    arguments), timed with block_until_ready: the median of N runs after a
    warmup, and its compile time (`lowered.compile()`, fresh each time; the
    trace and lowering are reported apart);
  * a numpy copy (one thread) of the same number of bytes, in the jax process;

then prints the Markdown table that BENCHMARKS.md records:

    .venv/bin/python bench/codegen_bench.py [--repeat 20] [--threads 2]
        [--rounds 3] [--cases gelu,f32_chain,...]

With --rounds R everything is repeated R times, each case's contenders one
after the other, and each figure is the median over the rounds (ratios are
taken within a round, then their median is printed). docs/codegen-bench.md
explains the columns and the caveats.

Thread count. XLA:CPU (jax 0.10) splits a loop fusion into as many parallel
partitions as the process has CPUs in its affinity mask (the compiled HLO
says `outer_dimension_partitions`); `XLA_FLAGS=--xla_cpu_multi_thread_eigen=
false` only concerns Eigen (dots, convolutions) and the old
`intra_op_parallelism_threads=N` is silently ignored. So the jax process, and
tessel alike, run pinned to the first T CPUs (sched_setaffinity). When T is
less than the machine's CPUs XLA is also timed unpinned ("all cores").

jax is not in requirements.txt; install it with

    .venv/bin/python -m pip install -r requirements-jax.txt
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASE_DIR = ROOT / "bench" / "codegen"

# ---------------------------------------------------------------------------
# The cases: an HLO file and the same computation in jax (op for op, in the
# HLO's order, constants in the HLO's element type).
# ---------------------------------------------------------------------------


def jax_gelu(jnp, x):
    c = lambda v: jnp.asarray(v, dtype=x.dtype)  # noqa: E731
    square = x * x
    cube = square * x
    add_1 = x + cube * c(0.044708)
    tanh_0 = jnp.tanh(add_1 * c(0.79785))
    return x * ((tanh_0 + c(1)) * c(0.5))


def jax_f32_chain(jnp, x, y):
    return jnp.tanh(x * jnp.exp(-(x * x)) + y) * jnp.float32(0.5) + y * y


def jax_broadcast_add(jnp, x, bias):
    return x + bias[None, None, :]


def jax_convert_chain_bf16(jnp, x):
    wide = x.astype(jnp.float32) * jnp.float32(3)
    back = wide.astype(jnp.float16).astype(jnp.float32)
    return (back + jnp.float32(1)).astype(jnp.bfloat16)


def jax_convert_f32_bf16(jnp, x):
    return x.astype(jnp.bfloat16).astype(jnp.float32) * x


def jax_transpose_f32(jnp, x):
    return x.T


def jax_column_sum_f32(jnp, x):
    return -jnp.sum(x, axis=0)  # the HLO negates the sums (an epilogue)


def jax_row_sum_f32(jnp, x):
    return jnp.sum(x, axis=1)


def jax_column_max_f32(jnp, x):
    return jnp.max(x, axis=0)


def jax_column_max_bf16(jnp, x):
    return jnp.max(x, axis=0)


def jax_row_max_f32(jnp, x):
    return jnp.max(x, axis=1)


def jax_row_max_bf16(jnp, x):
    return jnp.max(x, axis=1)


def jax_softmax_f32(jnp, x):
    e = jnp.exp(x - jnp.max(x, axis=1, keepdims=True))
    return e / jnp.sum(e, axis=1, keepdims=True)


def jax_transpose_fused_f32(jnp, x):
    return jnp.abs(jnp.exp(x).T)


def jax_transpose_fused_s8(jnp, x):
    return jnp.abs((-x).T)


def jax_transpose_bf16(jnp, x):
    return x.T


def jax_softmax_bf16(jnp, x):
    return jax_softmax_f32(jnp, x.astype(jnp.float32)).astype(jnp.bfloat16)


def jax_layernorm_f32(jnp, x, gamma):
    mean = jnp.sum(x, axis=1, keepdims=True) / jnp.float32(x.shape[1])
    centered = x - mean
    var = jnp.sum(centered * centered, axis=1, keepdims=True) / jnp.float32(x.shape[1])
    return centered * (1 / jnp.sqrt(var + jnp.float32(1e-5))) * gamma


def jax_layernorm_bf16(jnp, x, gamma):
    return jax_layernorm_f32(jnp, x.astype(jnp.float32),
                             gamma.astype(jnp.float32)).astype(jnp.bfloat16)


JAX_FUNCTIONS = {
    "transpose_f32": jax_transpose_f32,
    "transpose_fused_f32": jax_transpose_fused_f32,
    "transpose_fused_s8": jax_transpose_fused_s8,
    "transpose_bf16": jax_transpose_bf16,
    "softmax_bf16": jax_softmax_bf16,
    "column_sum_f32": jax_column_sum_f32,
    "column_max_f32": jax_column_max_f32,
    "column_max_bf16": jax_column_max_bf16,
    "row_max_f32": jax_row_max_f32,
    "row_max_bf16": jax_row_max_bf16,
    "row_sum_f32": jax_row_sum_f32,
    "softmax_f32": jax_softmax_f32,
    "layernorm_f32": jax_layernorm_f32,
    "layernorm_bf16": jax_layernorm_bf16,
    "gelu": jax_gelu,
    "f32_chain": jax_f32_chain,
    "broadcast_add": jax_broadcast_add,
    "convert_chain_bf16": jax_convert_chain_bf16,
    "convert_f32_bf16": jax_convert_f32_bf16,
}


def all_cases():
    cases = {"gelu": ROOT / "examples" / "gelu.hlo"}
    for path in sorted(CASE_DIR.glob("*.hlo")):
        cases[path.stem] = path
    return cases


ENTRY_PARAM = re.compile(r"=\s*(\w+)\[([\d,\s]*)\](?:\{[^}]*\})?\s+parameter\((\d+)\)")
ENTRY_ROOT = re.compile(r"ROOT\s+\S+\s*=\s*(\w+)\[([\d,\s]*)\]")


def entry_signature(path):
    """(parameters, result) of the ENTRY computation: lists of (dtype, dims)."""
    text = path.read_text()
    start = text.find("ENTRY")
    if start < 0:
        raise ValueError(f"{path}: no ENTRY computation")
    # The computation ends at a "}" of its own line (attributes such as
    # dimensions={1} have braces too).
    end = text.find("\n}", start)
    body = text[start:end + 2 if end >= 0 else len(text)]
    params = {}
    for m in ENTRY_PARAM.finditer(body):
        dims = [int(d) for d in m.group(2).split(",") if d.strip()]
        params[int(m.group(3))] = (m.group(1), dims)
    root = ENTRY_ROOT.search(body)
    result = [(root.group(1), [int(d) for d in root.group(2).split(",") if d.strip()])]
    return [params[i] for i in sorted(params)], result


def describe(sig):
    params, result = sig
    ins = ", ".join(f"{t}[{','.join(map(str, d))}]" for t, d in params)
    outs = ", ".join(f"{t}[{','.join(map(str, d))}]" for t, d in result)
    return f"({ins}) -> {outs}"


def has_narrow_floats(sig):
    params, result = sig
    return any(t in ("bf16", "f16") for t, _ in params + result)


# ---------------------------------------------------------------------------
# tessel
# ---------------------------------------------------------------------------

TIME_RE = re.compile(r"time: ([\d.]+) ms median of (\d+) runs, ([\d.]+) GB/s \((\d+) bytes")
COPY_RE = re.compile(r"copy of the same bytes: ([\d.]+) ms, ([\d.]+) GB/s; the kernels run at (\d+)%")
COMPILE_RE = re.compile(r"compile: ([\d.]+) ms")
CPU_RE = re.compile(r"cpu time: ([\d.]+) ms median per run, copy ([\d.]+) ms")


def pin(cpus):
    return lambda: os.sched_setaffinity(0, cpus)


def run_tessel(binary, hlo, repeat, threads, cpus, excess=False, extra=()):
    cmd = [str(binary), "run", str(hlo), "--repeat", str(repeat),
           "--threads", str(threads), *extra]
    if excess:
        cmd.append("--excess-precision")
    for attempt in range(3):
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  preexec_fn=pin(cpus))
            break
        except OSError as e:  # the binary is being relinked by a build
            if attempt == 2:
                return {"error": [f"cannot run {binary}: {e}"], "cmd": " ".join(cmd)}
            time.sleep(10)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"],
                "cmd": " ".join(cmd)}
    out = proc.stdout
    t, c, k = TIME_RE.search(out), COPY_RE.search(out), COMPILE_RE.search(out)
    if not (t and c and k):
        return {"error": [f"cannot parse tessel's output: {out!r}"], "cmd": " ".join(cmd)}
    res = {"ms": float(t.group(1)), "gbs": float(t.group(3)), "bytes": int(t.group(4)),
           "copy_ms": float(c.group(1)), "copy_gbs": float(c.group(2)),
           "compile_ms": float(k.group(1)), "cmd": " ".join(cmd)}
    cpu = CPU_RE.search(out)  # tessel builds that print the process's CPU time
    if cpu:
        res["cpu_ms"], res["copy_cpu_ms"] = float(cpu.group(1)), float(cpu.group(2))
    return res


# ---------------------------------------------------------------------------
# jax (in a child process: the affinity must be set before jax starts)
# ---------------------------------------------------------------------------


def jax_worker(spec):
    """Runs in the child: times one case in jax and a numpy copy; prints JSON."""
    import numpy as np
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print(json.dumps({"error": "jax is not installed"}))
        return
    import ml_dtypes

    jax.config.update("jax_platforms", "cpu")
    dtypes = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16,
              "f64": np.float64, "s8": np.int8}
    rng = np.random.default_rng(1)
    host = [rng.uniform(-3.0, 3.0, size=dims).astype(dtypes[t])
            for t, dims in spec["params"]]
    if spec.get("plant_nan"):
        # Three NaNs in the first input (rows 5, 7, 9; columns 100, last,
        # 0): HLO's maximum and minimum, like numpy's, propagate them.
        for r, c in ((5, 100), (7, -1), (9, 0)):
            host[0][r, c] = np.nan
    fn = JAX_FUNCTIONS[spec["case"]]
    args = [jax.device_put(a) for a in host]

    # The backend's first compile initialises it: not counted.
    jax.jit(lambda a: a + 1).lower(np.float32(0)).compile()
    lower_ms, compile_ms, text = [], [], ""
    for _ in range(spec["compile_samples"]):
        fresh = jax.jit(lambda *a: fn(jnp, *a))  # a new function: no cache hit
        t0 = time.perf_counter()
        lowered = fresh.lower(*args)
        t1 = time.perf_counter()
        compiled = lowered.compile()
        t2 = time.perf_counter()
        lower_ms.append((t1 - t0) * 1e3)
        compile_ms.append((t2 - t1) * 1e3)
        text = compiled.as_text()
    partitions = re.findall(r'outer_dimension_partitions":\[([^\]]*)\]', text)
    # jax 0.10's XLA:CPU hands some reductions to YNNPACK (a custom fusion
    # "__ynn_fusion"), whose maxima drop NaNs (the NaN check below).
    ynn = "__ynn_fusion" in text

    out = compiled(*args)
    out.block_until_ready()
    # The same computation with a donated output buffer: XLA writes into it
    # (input_output_alias) instead of allocating a new output per call, as
    # tessel's timing writes into preallocated outputs. Out of place, like
    # tessel; the output of one call is the buffer of the next.
    n = len(args)
    donated = jax.jit(lambda *a: fn(jnp, *a[:n]), donate_argnums=n,
                      keep_unused=True).lower(*args, out).compile()
    aliased = "input_output_alias" in donated.as_text()
    buf = donated(*args, jnp.zeros_like(out))
    for _ in range(2):
        compiled(*args).block_until_ready()
        buf = donated(*args, buf)
        buf.block_until_ready()
    nbytes = sum(a.nbytes for a in host) + out.nbytes
    # numpy copy of the same bytes (half read, half written, as tessel's copy)
    src = np.ones(nbytes // 2, dtype=np.uint8)
    dst = np.zeros_like(src)
    np.copyto(dst, src)
    times, times_donated, times_flushed = [], [], []
    for _ in range(spec["repeat"]):
        t0 = time.perf_counter()
        out = compiled(*args)
        out.block_until_ready()
        t1 = time.perf_counter()
        buf = donated(*args, buf)
        buf.block_until_ready()
        t2 = time.perf_counter()
        times.append(t1 - t0)
        times_donated.append(t2 - t1)
        del out
        # Once more after a copy of as many bytes, untimed: the caches as
        # `tessel run --repeat` leaves them for its next run (it times a
        # copy between its runs), where the runs above follow a run that
        # read the same inputs.
        np.copyto(dst, src)
        t3 = time.perf_counter()
        buf = donated(*args, buf)
        buf.block_until_ready()
        times_flushed.append(time.perf_counter() - t3)
    out = buf
    copy = []
    for _ in range(spec["repeat"]):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        copy.append(time.perf_counter() - t0)

    result = {
        "ms": statistics.median(times_donated) * 1e3, "bytes": nbytes,
        "alloc_ms": statistics.median(times) * 1e3, "aliased": aliased,
        "flushed_ms": statistics.median(times_flushed) * 1e3,
        "gbs": nbytes / statistics.median(times_donated) / 1e9,
        "compile_ms": statistics.median(compile_ms),
        "lower_ms": statistics.median(lower_ms),
        "partitions": partitions, "ynn": ynn,
        "numpy_copy_ms": statistics.median(copy) * 1e3,
        "numpy_copy_gbs": nbytes / statistics.median(copy) / 1e9,
        "cpus": sorted(os.sched_getaffinity(0)),
    }
    if spec.get("dump_dir"):
        d = Path(spec["dump_dir"])
        for i, a in enumerate(host):
            np.save(d / f"input{i}.npy", a)
        np.save(d / "xla.npy", np.asarray(out))
    print(json.dumps(result))


def run_jax(case, sig, repeat, cpus, compile_samples, env_extra=None, dump_dir=None,
            plant_nan=False):
    spec = {"case": case, "params": sig[0], "repeat": repeat,
            "compile_samples": compile_samples, "dump_dir": dump_dir,
            "plant_nan": plant_nan}
    env = dict(os.environ)
    # tessel's buffers get transparent huge pages (HostBuffer); glibc's malloc,
    # which XLA:CPU's and numpy's large buffers come from, asks for them too
    # with this tunable (glibc >= 2.35; older ones ignore it), so that both
    # sides walk 2 MiB pages.
    tunables = [t for t in env.get("GLIBC_TUNABLES", "").split(":") if t]
    env["GLIBC_TUNABLES"] = ":".join(tunables + ["glibc.malloc.hugetlb=1"])
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, __file__, "--jax-worker", json.dumps(spec)],
                          capture_output=True, text=True, env=env, preexec_fn=pin(cpus))
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stderr.strip().splitlines() or ["jax worker failed"])[-1]}
    return json.loads(lines[-1])


# ---------------------------------------------------------------------------
# Agreement with XLA on the same inputs (outside the timing)
# ---------------------------------------------------------------------------


def compare_outputs(binary, hlo, case, sig, cpus, excess, plant_nan=False):
    import numpy as np
    import ml_dtypes
    with tempfile.TemporaryDirectory() as d:
        got = run_jax(case, sig, 1, cpus, 1, dump_dir=d, plant_nan=plant_nan)
        if "error" in got:
            return got["error"]
        inputs = sorted(Path(d).glob("input*.npy"))
        cmd = [str(binary), "run", str(hlo), "--output", f"{d}/tessel.npy"]
        for p in inputs:
            cmd += ["--input", str(p)]
        if excess:
            cmd.append("--excess-precision")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            return "tessel failed: " + proc.stderr.strip()
        dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16,
                 "f64": np.float64, "s8": np.int8}[sig[1][0][0]]
        want = np.load(f"{d}/xla.npy").view(dtype)
        have = np.load(f"{d}/tessel.npy").view(dtype)
    if plant_nan:
        nx = int(np.sum(np.isnan(want.astype(np.float64))))
        nt = int(np.sum(np.isnan(have.astype(np.float64))))
        return (f"NaN in 3 input elements: {nx} NaN outputs from XLA:CPU, {nt} from "
                f"tessel (3 propagate them, as HLO's maximum does)")
    if np.issubdtype(want.dtype, np.integer):
        exact = float(np.mean(want == have)) * 100
        diff = int(np.max(np.abs(want.astype(np.int64) - have.astype(np.int64)), initial=0))
        return f"{exact:.2f}% identical, max abs diff {diff}"
    # ulp distance through the integer order of the floats
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[want.dtype.itemsize]
    def ordered(a):
        i = a.view(bits).astype(np.int64)
        return np.where(i < 0, np.iinfo(bits).min - i, i)
    ulp = np.abs(ordered(want) - ordered(have))
    same = np.isnan(want.astype(np.float64)) & np.isnan(have.astype(np.float64))
    ulp = np.where(same, 0, ulp)
    exact = float(np.mean(ulp == 0)) * 100
    w, h = want.astype(np.float64), have.astype(np.float64)
    finite = np.isfinite(w) & np.isfinite(h)
    diff = float(np.max(np.abs(w - h)[finite], initial=0))
    scale = float(np.max(np.abs(w)[finite], initial=0))
    odd = int(np.sum(np.isfinite(w) != np.isfinite(h)))
    return (f"{exact:.2f}% identical, max {int(ulp.max())} ulp, max abs diff {diff:.3g} "
            f"(largest |output| {scale:.3g})" + (f", {odd} finite vs inf/NaN" if odd else ""))


# ---------------------------------------------------------------------------


def cpu_header():
    info = Path("/proc/cpuinfo").read_text()
    field = lambda k: (re.search(rf"^{k}\s*:\s*(.*)$", info, re.M) or [None, "?"])[1]  # noqa: E731
    flags = set(field("flags").split())
    isa = ", ".join(f"{f} {'yes' if f in flags else 'no'}"
                    for f in ("avx2", "fma", "avx512f", "avx512bw", "avx512_bf16", "avx512_fp16"))
    return (f"{field('model name')} (family {field('cpu family')}, model {field('model')}, "
            f"stepping {field('stepping')}), {os.cpu_count()} CPUs; ISA: {isa}")


def cpu_busy(seconds=2.0):
    """Share of all CPUs busy over a short sample (/proc/stat), 0..1."""
    def sample():
        f = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        return sum(f), f[3] + f[4]  # total, idle + iowait
    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1 - (i1 - i0) / max(t1 - t0, 1)


def busy_processes():
    busy = []
    for name in ("ninja", "cc1plus", "clang", "clang++", "ld", "lld"):
        if subprocess.run(["pgrep", "-x", name], capture_output=True).returncode == 0:
            busy.append(f"{name} running")
    return busy


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, spec=".2f", suffix=""):
    return "-" if v is None else f"{v:{spec}}{suffix}"


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--jax-worker":
        jax_worker(json.loads(sys.argv[2]))
        return
    cases = all_cases()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--repeat", type=int, default=20, help="timed runs per figure (>= 20)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="threads for tessel; both run pinned to that many CPUs")
    parser.add_argument("--rounds", type=int, default=3,
                        help="repeat everything and take medians over the rounds")
    parser.add_argument("--cases", default=",".join(cases),
                        help="comma-separated, of: " + ", ".join(cases))
    parser.add_argument("--compile-samples", type=int, default=5,
                        help="extra `tessel run --repeat 1` per case for the compile "
                             "time median (jax: fresh compiles per round)")
    parser.add_argument("--no-xla", action="store_true", help="tessel and the copy only")
    parser.add_argument("--no-compare", action="store_true",
                        help="skip comparing tessel's outputs with XLA's")
    parser.add_argument("--json", help="also write the raw figures here")
    opts = parser.parse_args()

    binary = Path(opts.build) / "bin" / "tessel"
    if not binary.exists():
        binary = Path(opts.build) / "tools" / "tessel" / "tessel"
    if not binary.exists():
        sys.exit(f"codegen_bench.py: {binary} not found; build it with ./build.sh --no-demo")
    names = [c for c in opts.cases.split(",") if c]
    for c in names:
        if c not in cases:
            sys.exit(f"codegen_bench.py: unknown case '{c}'; cases: {', '.join(cases)}")
    if opts.repeat < 1 or opts.threads < 1 or opts.rounds < 1:
        sys.exit("codegen_bench.py: --repeat, --threads and --rounds must be positive")
    xla = not opts.no_xla
    if xla:
        try:
            import jax  # noqa: F401
        except ImportError:
            sys.exit("codegen_bench.py: jax is not installed; run\n"
                     "    .venv/bin/python -m pip install -r requirements-jax.txt\n"
                     "or pass --no-xla")
        import jax
        jax_version = jax.__version__
    all_cpus = sorted(os.sched_getaffinity(0))
    cpus = set(all_cpus[:opts.threads])
    unpinned = xla and opts.threads < len(all_cpus)

    busy = busy_processes()
    load = cpu_busy()
    if load > 0.15:
        busy.append(f"the CPUs are {100 * load:.0f}% busy before the benchmark starts")
    print(f"# CPU: {cpu_header()}", flush=True)
    print(f"# tessel {binary}; " + (f"jax {jax_version} (XLA:CPU); " if xla else "")
          + f"--repeat {opts.repeat} --threads {opts.threads} --rounds {opts.rounds}; "
          f"pinned to CPUs {sorted(cpus)}", flush=True)
    print(f"# load average {os.getloadavg()[0]:.2f}; "
          + ("BUSY: " + "; ".join(busy) + "; figures are not reliable" if busy
             else "no compiler running, CPUs idle"), flush=True)

    sigs = {c: entry_signature(cases[c]) for c in names}
    # Kernels that run as a table lookup or a relayout plan are also timed
    # through the emitters' code (--no-tables --no-relayout).
    explained = {c: subprocess.run(
        [str(binary), "compile", str(cases[c]), "--explain"],
        capture_output=True, text=True).stdout for c in names}
    tabulated = {c: ("runs as a table lookup" in explained[c]
                     or "runs as a relayout" in explained[c]) for c in names}
    shortcut = {c: ", table" if "runs as a table lookup" in explained[c] else
                ", relayout" if "runs as a relayout" in explained[c] else ""
                for c in names}
    computed_flags = ("--no-tables", "--no-relayout")
    rows = {}  # (case, mode) -> list of per-round dicts
    xla_rounds = {c: [] for c in names}
    xla_all_rounds = {c: [] for c in names}
    for r in range(opts.rounds):
        for c in names:
            modes = ["strict"] + (["excess"] if has_narrow_floats(sigs[c]) else [])
            if tabulated[c]:
                modes += [m + "-computed" for m in modes]
            for mode in modes:
                res = run_tessel(binary, cases[c], opts.repeat, opts.threads, cpus,
                                 excess=mode.startswith("excess"),
                                 extra=computed_flags if mode.endswith("computed") else ())
                rows.setdefault((c, mode), []).append(res)
                if "error" in res:
                    print(f"# round {r + 1} {c} {mode}: tessel FAILED: {res['error'][0]}",
                          file=sys.stderr, flush=True)
            if xla and c in JAX_FUNCTIONS:
                res = run_jax(c, sigs[c], opts.repeat, cpus, compile_samples=3)
                xla_rounds[c].append(res)
                if "error" in res:
                    print(f"# round {r + 1} {c}: jax FAILED: {res['error']}",
                          file=sys.stderr, flush=True)
                if unpinned:
                    xla_all_rounds[c].append(
                        run_jax(c, sigs[c], opts.repeat, set(all_cpus), compile_samples=1))
        print(f"# round {r + 1} of {opts.rounds} done", file=sys.stderr, flush=True)

    # extra compile-time samples for tessel
    for (c, mode), results in rows.items():
        for _ in range(opts.compile_samples):
            results.append(dict(run_tessel(
                binary, cases[c], 1, opts.threads, cpus, excess=mode.startswith("excess"),
                extra=computed_flags if mode.endswith("computed") else ()),
                compile_only=True))

    header = ("| case | shapes | numerics | tessel ms | tessel GB/s | copy ms | % of copy "
              "| XLA:CPU ms | tessel vs XLA | XLA:CPU ms, new output per call "
              "| tessel vs that | numpy copy ms | compile ms tessel | compile ms XLA |")
    if unpinned:
        header += " XLA:CPU ms, all cores |"
    print()
    print(header)
    print("|" + "|".join(["---"] * 3 + ["---:"] * (header.count("|") - 4)) + "|")
    summary = {}
    for (c, mode), results in rows.items():
        timed = [x for x in results if "error" not in x and not x.get("compile_only")]
        compiles = [x["compile_ms"] for x in results if "error" not in x]
        xr = [x for x in xla_rounds.get(c, []) if "error" not in x]
        errors = [x for x in results if "error" in x]
        numerics = (("strict" if mode.startswith("strict") else "excess")
                    if has_narrow_floats(sigs[c]) else sigs[c][1][0][0]) \
            + (shortcut[c] if not mode.endswith("computed") else "") \
            + (", emitted (--no-tables --no-relayout)" if mode.endswith("computed") else "")
        summary[f"{c}/{mode}"] = {"tessel": results, "xla": xla_rounds.get(c, []),
                                  "xla_all_cores": xla_all_rounds.get(c, [])}
        if not timed:
            print(f"| {c} | {describe(sigs[c])} | {numerics} | refused: "
                  f"{errors[0]['error'][0] if errors else '?'} |")
            continue
        pairs = list(zip(timed, xr)) if len(xr) == len(timed) else []
        row = [c, describe(sigs[c]), numerics,
               fmt(med([x["ms"] for x in timed]), ".2f"),
               fmt(med([x["gbs"] for x in timed]), ".2f"),
               fmt(med([x["copy_ms"] for x in timed]), ".2f"),
               fmt(med([100 * x["copy_ms"] / x["ms"] for x in timed]), ".0f", "%"),
               fmt(med([x["ms"] for x in xr]), ".2f"),
               fmt(med([y["ms"] / x["ms"] for x, y in pairs]), ".2f", "x"),
               fmt(med([x["alloc_ms"] for x in xr]), ".2f"),
               fmt(med([y["alloc_ms"] / x["ms"] for x, y in pairs]), ".2f", "x"),
               fmt(med([x["numpy_copy_ms"] for x in xr]), ".2f"),
               fmt(med(compiles), ".1f"),
               fmt(med([x["compile_ms"] for x in xr]), ".1f")]
        if unpinned:
            xa = [x for x in xla_all_rounds.get(c, []) if "error" not in x]
            row.append(fmt(med([x["ms"] for x in xa]), ".2f"))
        print("| " + " | ".join(row) + " |")

    # CPU time (all threads of tessel's process), steadier than the wall
    # time on a busy machine; only from tessel builds that print it.
    cpu_lines = []
    for (c, mode), results in rows.items():
        timed = [x for x in results
                 if "cpu_ms" in x and "error" not in x and not x.get("compile_only")]
        if timed:
            cpu_lines.append(
                f"# {c} {mode}: tessel CPU time {med([x['cpu_ms'] for x in timed]):.2f} ms, "
                f"copy {med([x['copy_cpu_ms'] for x in timed]):.2f} ms, "
                f"{med([100 * x['copy_cpu_ms'] / x['cpu_ms'] for x in timed]):.0f}% of copy")
    if cpu_lines:
        print()
        print("\n".join(cpu_lines))

    if xla:
        print()
        for c in names:
            xr = [x for x in xla_rounds.get(c, []) if "error" not in x]
            if xr:
                print(f"# {c}: XLA partitions {xr[0]['partitions'] or 'none'}, "
                      f"output buffer donated: {xr[0]['aliased']}, "
                      f"jax trace+lower {med([x['lower_ms'] for x in xr]):.1f} ms "
                      f"(not in the compile column), XLA GB/s "
                      f"{med([x['gbs'] for x in xr]):.2f}, XLA:CPU ms after a "
                      f"copy of as many bytes (the caches as tessel's runs "
                      f"find them) "
                      f"{med([x['flushed_ms'] for x in xr]):.2f}"
                      + ("; XLA:CPU ran it as a YNNPACK fusion" if xr[0].get("ynn") else ""))
        if not opts.no_compare:
            for c in names:
                if c not in JAX_FUNCTIONS:
                    continue
                modes = [False] + ([True] if has_narrow_floats(sigs[c]) else [])
                for excess in modes:
                    msg = compare_outputs(binary, cases[c], c, sigs[c], cpus, excess)
                    print(f"# {c}{' --excess-precision' if excess else ''} vs XLA:CPU "
                          f"on the same inputs: {msg}")
                if "_max_" in c:
                    msg = compare_outputs(binary, cases[c], c, sigs[c], cpus, False,
                                          plant_nan=True)
                    print(f"# {c}: {msg}")
    if opts.json:
        Path(opts.json).write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
