"""Native baselines on the same GPU, in the same command as the WebGPU bench.

torch._int_mm (int8 x int8 -> int32, cuBLASLt) at the bench's prefill shapes, f16 torch.matmul for
reference, and a device-to-device copy for the bandwidth ceiling. Random data, never zeros, rotating through
several weight banks so the weight is read cold (each bank set is several times the 60 MB L2). Writes JSON
to argv[1]; `--self-test` checks the batch rule without a GPU.

Timed as the WebGPU bench times a row (bench/exec.ts): after a warm-up, batches of back-to-back calls of
about BATCH_MS each between two CUDA events, six of them, six more when they disagree by over 10%, the
fastest batch's ms per call reported (`ms`). A spinning kernel holds the stream while the CPU queues a
batch, so no call waits on the CPU's launch: the bench encodes its dispatches into one compute pass, and
timing torch one call at a time would charge it a launch each (up to 2026-12-04 every `ms` here did: that
figure is still recorded, as `ms_call`).
"""

import json
import statistics
import sys
import time

MS = [32, 128, 512, 2048]
NK = [(4096, 4096), (11008, 4096), (4096, 11008)]
L2_BYTES = 60 * 1024 * 1024

# The WebGPU bench's timing parameters (bench/harness.ts --target-ms 15 on the H200, bench/exec.ts
# BATCH_SPREAD_LIMIT, src/kernels/gpu/run.ts CLOCK_WARM_MS), so both sides are timed alike.
BATCH_MS = 15.0
REPS = 6
SPREAD = 1.1
WARM_MS = 150.0
# Calls a batch queues behind the spinning kernel: CUDA's launch queue holds about a thousand.
MAX_CALLS = 512
# The spin lasts this long per queued call (and SPIN_BASE_MS more), counted at 2 GHz: more than the CPU
# takes to launch one _int_mm (tens of us), so the whole batch is queued before its first call runs.
SPIN_MS_PER_CALL = 0.05
SPIN_BASE_MS = 5.0
SPIN_CYCLES_PER_MS = 2.0e6


def calls_for(target_ms, per_call_ms, most=MAX_CALLS):
    """Calls in a batch of about `target_ms`, from an estimate of one call: 2..most."""
    return int(max(2, min(most, round(target_ms / max(per_call_ms, 1e-3)))))


def batches_agree(samples, spread=SPREAD):
    """True when the slowest batch is within `spread` of the fastest (bench/exec.ts batchesAgree)."""
    return max(samples) <= spread * min(samples)


def timed_batches(batch, reps=REPS, spread=SPREAD):
    """`reps` batches, then `reps` more when they disagree; batch() returns ms per call (bench/exec.ts)."""
    samples = []
    while len(samples) < reps or (len(samples) < 2 * reps and not batches_agree(samples, spread)):
        samples.append(batch())
    return samples


def time_one_at_a_time(fn, reps=50, warmup=10):
    """Median and min ms of `fn(i)` over `reps` calls, each bracketed by CUDA events and synchronized:
    the rule up to 2026-12-04, which charges every call the CPU's launch latency."""
    import torch

    for i in range(warmup):
        fn(i)
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn(i)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), min(times)


def time_back_to_back(fn):
    """The bench's rule for `fn(i)` (i picks the weight bank): {ms, ms_batches, calls, queued_ahead}.

    queued_ahead is False when the CPU was still queueing a batch after the spin it sat behind had ended
    (then launch gaps may be inside that batch's time)."""
    import torch

    spin = getattr(torch.cuda, "_sleep", None)
    state = {"next": 0, "ahead": True}

    def batch(n):
        s = torch.cuda.Event(enable_timing=True)
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        s.record()
        if spin is not None:
            spin(int((SPIN_BASE_MS + SPIN_MS_PER_CALL * n) * SPIN_CYCLES_PER_MS))
        t0 = time.perf_counter()
        a.record()
        for i in range(n):
            fn(state["next"] + i)
        b.record()
        queued_ms = (time.perf_counter() - t0) * 1e3
        b.synchronize()
        state["next"] += n
        if spin is None or queued_ms > s.elapsed_time(a):
            state["ahead"] = False
        return a.elapsed_time(b) / n

    est = batch(2)
    batch(calls_for(WARM_MS, est, most=4 * MAX_CALLS))  # untimed warm-up, as the bench's
    n = calls_for(BATCH_MS, batch(8))
    state["ahead"] = True  # only the timed batches count
    samples = timed_batches(lambda: batch(n))
    return {"ms": min(samples), "ms_batches": samples, "calls": n, "queued_ahead": state["ahead"]}


def time_fn(fn):
    """Both rules: the bench's (`ms`, what the ratios use) and one call at a time (`ms_call`)."""
    rec = time_back_to_back(fn)
    med, mn = time_one_at_a_time(fn)
    rec["ms_call"], rec["ms_call_min"] = med, mn
    return rec


def self_test():
    """The batch rule without a GPU: bench/exec.ts timedBatches's rule (test/bench.test.ts checks that one)."""
    assert calls_for(15.0, 0.1) == 150
    assert calls_for(15.0, 100.0) == 2
    assert calls_for(15.0, 0.001) == MAX_CALLS
    steady = [0.2117, 0.2097, 0.2097, 0.2107, 0.2097, 0.2107]
    it = iter(steady + [9.0])
    assert timed_batches(lambda: next(it)) == steady
    # Three slow batches that agree (an H200 row of 2026-12-04: 0.5514, 0.5514, 0.4881, then 0.1062):
    # three batches would have reported the slow phase; six see past it, and six more follow.
    slow = [0.5514, 0.5514, 0.4881, 0.1085, 0.1062, 0.1062] + [0.1062] * 6
    it = iter(slow + [9.0])
    got = timed_batches(lambda: next(it))
    assert got == slow and min(got) == 0.1062
    # Never more than twice reps, even when they keep disagreeing.
    it = iter([1.0, 2.0] * 7)
    assert len(timed_batches(lambda: next(it), reps=3)) == 6
    # time_back_to_back against a stand-in for torch.cuda whose clock is the work queued on it: a call
    # costs 0.1 ms up to the timed batches; then 0.3 ms in the first five (a slow phase the warm-up did not
    # cover), 0.1 ms in the sixth and 0.12 ms after.
    import types

    warm = 2 + calls_for(WARM_MS, 0.1, most=4 * MAX_CALLS) + 8
    gpu = {"t": 0.0, "calls": 0, "spin": 1.0}

    class Event:
        def __init__(self, enable_timing=False):
            self.t = 0.0

        def record(self):
            self.t = gpu["t"]

        def synchronize(self):
            pass

        def elapsed_time(self, later):
            return later.t - self.t

    def call(_i):
        b = (gpu["calls"] - warm) // 150  # the timed batch this call is in (< 0: before them)
        gpu["t"] += 0.1 if b < 0 or b == 5 else 0.3 if b < 5 else 0.12
        gpu["calls"] += 1

    def sleep(cycles):
        gpu["t"] += gpu["spin"] * cycles / SPIN_CYCLES_PER_MS

    fake = types.ModuleType("torch")
    fake.cuda = types.SimpleNamespace(Event=Event, _sleep=sleep, synchronize=lambda: None)
    real = sys.modules.get("torch")
    sys.modules["torch"] = fake
    try:
        got = time_back_to_back(call)
        assert got["calls"] == 150 and got["queued_ahead"], got
        assert [round(x, 9) for x in got["ms_batches"]] == [0.3] * 5 + [0.1] + [0.12] * 6, got
        assert abs(got["ms"] - 0.1) < 1e-9, got  # the fastest batch, not the median (0.12)
        # A spin that ends before the CPU has queued the batch: gaps may be inside the timed window.
        gpu.update(calls=0, spin=0.0)
        assert time_back_to_back(call)["queued_ahead"] is False
        # Without the spinning kernel nothing holds the stream.
        gpu.update(calls=0, spin=1.0)
        fake.cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: None)
        assert time_back_to_back(call)["queued_ahead"] is False
    finally:
        if real is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = real
    print("torch_baseline self-test: ok")


def banks_for(bytes_each):
    return max(2, min(16, (4 * L2_BYTES) // max(1, bytes_each) + 1))


def main():
    if sys.argv[1:2] == ["--self-test"]:
        self_test()
        return
    import torch

    out_path = sys.argv[1] if len(sys.argv) > 1 else "torch.json"
    # Optional "m,n,k": that one shape only (a short command when device time is short); m may list several
    # rows counts, "32/128/512/2048,4096,4096".
    ms, nk = MS, NK
    if len(sys.argv) > 2:
        m_list, n, k = sys.argv[2].split(",")
        ms, nk = [int(m) for m in m_list.split("/")], [(int(n), int(k))]
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    res = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": props.name,
        "sms": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "timing": "ms: the fastest of 6-12 batches of back-to-back calls (about 15 ms each, queued behind a "
        "spinning kernel), as the WebGPU bench times a row; ms_call: the median of 50 calls timed one at a time",
        "int_mm": [],
        "f16_mm": [],
    }
    g = torch.Generator(device=dev)
    g.manual_seed(1234)
    for n, k in nk:
        nb = banks_for(n * k)
        w8 = [torch.randint(-127, 128, (k, n), device=dev, dtype=torch.int8, generator=g) for _ in range(nb)]
        w8t = [torch.randint(-127, 128, (n, k), device=dev, dtype=torch.int8, generator=g).t() for _ in range(nb)]
        w16 = [torch.randn((k, n), device=dev, dtype=torch.float16, generator=g) for _ in range(banks_for(2 * n * k))]
        for m in ms:
            a8 = torch.randint(-127, 128, (m, k), device=dev, dtype=torch.int8, generator=g)
            a16 = torch.randn((m, k), device=dev, dtype=torch.float16, generator=g)
            # Correctness of the baseline itself on one bank (exact in int32 vs a float64 product).
            ref = (a8.double() @ w8[0].double()).to(torch.int64)
            got = torch._int_mm(a8, w8[0]).to(torch.int64)
            exact = bool(torch.equal(ref, got))
            ops = 2 * m * n * k
            # Two layouts of the same weight: B [k,n] row-major, and B = W^T for W [n,k] row-major (the
            # layout a GGUF weight and the WebGPU kernels use; cuBLASLt's int8 fast path wants it).
            for layout, bank in (("kn", w8), ("nk_t", w8t)):
                if layout == "nk_t":
                    got_t = torch._int_mm(a8, bank[0]).to(torch.int64)
                    ref_t = (a8.double() @ bank[0].double()).to(torch.int64)
                    ex = bool(torch.equal(ref_t, got_t))
                else:
                    ex = exact
                t = time_fn(lambda i: torch._int_mm(a8, bank[i % nb]))
                rec = {"m": m, "n": n, "k": k, "layout": layout, "banks": nb, **t,
                       "tops": ops / (t["ms"] * 1e-3) / 1e12, "exact": ex}
                res["int_mm"].append(rec)
                print(f"int_mm  m={m:5d} n={n:5d} k={k:5d} {layout:5s} {t['ms']:8.4f} ms  {rec['tops']:7.1f} TOPS  "
                      f"(one at a time {t['ms_call']:.4f} ms, {t['calls']} calls a batch, queued ahead "
                      f"{t['queued_ahead']})  exact={ex}", flush=True)
            nb16 = len(w16)
            t16 = time_fn(lambda i: a16 @ w16[i % nb16])
            rec16 = {"m": m, "n": n, "k": k, "banks": nb16, **t16, "tflops": ops / (t16["ms"] * 1e-3) / 1e12}
            res["f16_mm"].append(rec16)
            print(f"f16 mm  m={m:5d} n={n:5d} k={k:5d}  {t16['ms']:8.4f} ms  {rec16['tflops']:7.1f} TFLOP/s  "
                  f"(one at a time {t16['ms_call']:.4f} ms)", flush=True)
        del w8, w8t, w16
        torch.cuda.empty_cache()
    # Device-to-device copy: bytes read + bytes written.
    nbytes = 2 * 1024**3
    src = torch.empty(nbytes, dtype=torch.uint8, device=dev).random_(0, 255, generator=g)
    dst = torch.empty_like(src)
    # A 2 GB copy takes about a millisecond: one launch's latency does not matter there.
    med, _ = time_one_at_a_time(lambda i: dst.copy_(src), reps=20, warmup=3)
    res["copy"] = {"bytes": nbytes, "ms": med, "gbs_read_plus_write": 2 * nbytes / (med * 1e-3) / 1e9}
    print(f"copy    {nbytes/1e9:.2f} GB  {med:.3f} ms  {res['copy']['gbs_read_plus_write']:.0f} GB/s (read+write)", flush=True)
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
