"""Native baselines on the same GPU, in the same command as the WebGPU bench.

torch._int_mm (int8 x int8 -> int32, cuBLASLt) at the bench's prefill shapes, f16 torch.matmul for
reference (both weight layouts, B [k,n] and B = W^T; the faster is the shape's entry), and a
device-to-device copy for the bandwidth ceiling. Random data, never zeros, rotating through several weight
banks so the weight is read cold (each bank set is several times the 60 MB L2). Writes JSON
to argv[1]; `--self-test` checks the batch rule and the MoE routing without a GPU; `--no-moe` skips the MoE
step, `--moe-only` runs only it; `--routing T,E,K` prints the MoE routing of T tokens over E experts, top K.

MoE (key "moe"): n = k = 4096, top-2, at the issue's experts x tokens, routed as the WebGPU bench routes its
MoE rows (moe_routing is src/kernels/moe moeRouting with the same seed), timed two ways: a per-expert loop of
f16 cuBLAS matmuls (gather the expert's token rows, x_e @ W_e^T, scatter to the slots), and one bf16
torch._grouped_mm over the slots sorted by expert, where the installed torch has it. Both write one output
row per (token, expert) slot, as the WebGPU MoE kernel does.

Timed as the WebGPU bench times a row (bench/exec.ts): after a warm-up, batches of back-to-back calls of
about BATCH_MS each between two CUDA events, six of them, six more when they disagree by over 10%, the
fastest batch's ms per call reported (`ms`). A spinning kernel holds the stream while the CPU queues a
batch, so no call waits on the CPU's launch: the bench encodes its dispatches into one compute pass, and
timing torch one call at a time would charge it a launch each (up to 2026-12-04 every `ms` here did: that
figure is still recorded, as `ms_call`).
"""

import json
import math
import statistics
import sys
import time

MS = [32, 128, 512, 2048]
NK = [(4096, 4096), (11008, 4096), (4096, 11008)]
L2_BYTES = 60 * 1024 * 1024

# MoE: (experts, tokens) at n = k = 4096, top-2: the WebGPU bench's default cases (bench/cases.ts moeCases;
# test/benchCases.test.ts holds them equal), so each has torch beside it; the bench's routing seed
# (src/kernels/moe/moe.plan.ts MOE_ROUTING_SEED).
MOE_CASES = [(8, 32), (8, 128), (8, 512), (8, 2048), (64, 32), (64, 128), (64, 512), (64, 2048)]
MOE_TOPK = 2
MOE_N = MOE_K = 4096
MOE_ROUTING_SEED = 0x6A09E667F3BCC908
MASK64 = (1 << 64) - 1
# Rows a torch._grouped_mm group is padded to when the unpadded call is refused (a kernel that wants aligned
# group offsets); the padding rows' outputs are discarded.
GROUP_ALIGN = 16


def moe_routing(tokens, experts, topk, seed=MOE_ROUTING_SEED):
    """Expert ids [tokens * topk], slot t*topk + j: src/kernels/moe/moe.plan.ts moeRouting (xorshift64
    13/7/17, a partial Fisher-Yates shuffle of one permutation carried across tokens), so torch and the WebGPU
    bench route the same tokens to the same experts."""
    if not 1 <= topk <= experts:
        raise ValueError(f"topk = {topk} must be in 1..experts ({experts})")
    s = seed & MASK64
    perm = list(range(experts))
    ids = []
    for _ in range(tokens):
        for j in range(topk):
            s ^= (s << 13) & MASK64
            s ^= s >> 7
            s ^= (s << 17) & MASK64
            pick = j + s % (experts - j)
            perm[j], perm[pick] = perm[pick], perm[j]
            ids.append(perm[j])
    return ids


def moe_groups(ids, experts, topk, align=1):
    """The slots grouped by expert, as a grouped GEMM reads them.

    Returns {buckets: slots per expert, counts, order: slot of each grouped row (None for a padding row),
    tokens: activation row each grouped row reads (padding rows read row 0), offsets: each group's end row
    (torch._grouped_mm's offs), dest: where each grouped row's output goes (padding rows to the spare row
    len(ids))}. align > 1 pads every group's row count up to a multiple of it."""
    buckets = [[] for _ in range(experts)]
    for slot, e in enumerate(ids):
        buckets[e].append(slot)
    order, offsets = [], []
    for b in buckets:
        order += b + [None] * (-len(b) % align)
        offsets.append(len(order))
    spare = len(ids)
    return {
        "buckets": buckets,
        "counts": [len(b) for b in buckets],
        "order": order,
        "tokens": [0 if slot is None else slot // topk for slot in order],
        "offsets": offsets,
        "dest": [spare if slot is None else slot for slot in order],
    }


def rel_to_max(got, want):
    """max |got - want| / max |want| over two equal-length lists of numbers (the bench's gate)."""
    peak = max(abs(w) for w in want) or 1e-30
    return max(abs(g - w) for g, w in zip(got, want)) / peak

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


def time_back_to_back(fn, launches=1):
    """The bench's rule for `fn(i)` (i picks the weight bank): {ms, ms_batches, calls, queued_ahead}.

    queued_ahead is False when the CPU was still queueing a batch after the spin it sat behind had ended
    (then launch gaps may be inside that batch's time). `launches`: kernels one call queues (an MoE call
    loops over experts): the spin grows with it, and a batch queues at most MAX_CALLS kernels."""
    import torch

    spin = getattr(torch.cuda, "_sleep", None)
    state = {"next": 0, "ahead": True}
    most = max(2, MAX_CALLS // max(1, launches))

    def batch(n):
        s = torch.cuda.Event(enable_timing=True)
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        s.record()
        if spin is not None:
            spin(int((SPIN_BASE_MS + SPIN_MS_PER_CALL * launches * n) * SPIN_CYCLES_PER_MS))
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
    batch(calls_for(WARM_MS, est, most=4 * most))  # untimed warm-up, as the bench's
    n = calls_for(BATCH_MS, batch(min(8, most)), most=most)
    state["ahead"] = True  # only the timed batches count
    samples = timed_batches(lambda: batch(n))
    return {"ms": min(samples), "ms_batches": samples, "calls": n, "queued_ahead": state["ahead"]}


def time_fn(fn, launches=1):
    """Both rules: the bench's (`ms`, what the ratios use) and one call at a time (`ms_call`)."""
    rec = time_back_to_back(fn, launches)
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
    # time_back_to_back with several kernels a call: a batch queues at most MAX_CALLS kernels.
    gpu.update(calls=0, spin=1.0)
    fake.cuda = types.SimpleNamespace(Event=Event, _sleep=sleep, synchronize=lambda: None)
    sys.modules["torch"] = fake
    try:
        assert time_back_to_back(call, launches=64)["calls"] == MAX_CALLS // 64
        assert time_back_to_back(call, launches=4 * MAX_CALLS)["calls"] == 2
    finally:
        if real is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = real
    # MoE routing: the same ids as src/kernels/moe moeRouting (test/torchMoe.test.ts compares more cases).
    assert moe_routing(6, 8, 2) == [2, 3, 4, 5, 6, 1, 0, 6, 5, 1, 1, 3]
    assert moe_routing(4, 64, 2) == [26, 3, 36, 0, 30, 45, 3, 9]
    assert moe_routing(5, 3, 3, 12345) == [0, 2, 1, 0, 2, 1, 1, 0, 2, 1, 2, 0, 0, 1, 2]
    for experts, tokens in MOE_CASES:
        ids = moe_routing(tokens, experts, MOE_TOPK)
        assert len(ids) == tokens * MOE_TOPK and all(0 <= e < experts for e in ids)
        assert all(ids[2 * t] != ids[2 * t + 1] for t in range(tokens))  # a token's experts are distinct
    # Grouping: slots sorted by expert (stable), offsets = cumulative ends, an empty expert keeps its offset.
    g = moe_groups(moe_routing(6, 8, 2), 8, 2)
    assert g["order"] == [6, 5, 9, 10, 0, 1, 11, 2, 3, 8, 4, 7]
    assert g["tokens"] == [3, 2, 4, 5, 0, 0, 5, 1, 1, 4, 2, 3]
    assert g["counts"] == [1, 3, 1, 2, 1, 2, 2, 0]
    assert g["offsets"] == [1, 4, 5, 7, 8, 10, 12, 12]
    assert g["dest"] == g["order"]
    # Padded to 16 rows a group: padding rows read token 0 and write the spare row (12).
    p = moe_groups(moe_routing(6, 8, 2), 8, 2, align=16)
    assert p["offsets"] == [16, 32, 48, 64, 80, 96, 112, 112]
    assert p["order"][:2] == [6, None] and p["tokens"][:2] == [3, 0] and p["dest"][:2] == [6, 12]
    assert sorted(d for d in p["dest"] if d != 12) == list(range(12))
    assert rel_to_max([1.0, 2.5], [1.0, 2.0]) == 0.25
    print("torch_baseline self-test: ok")


def banks_for(bytes_each):
    return max(2, min(16, (4 * L2_BYTES) // max(1, bytes_each) + 1))


def moe_record(experts, tokens, way, nb, launches, used, t, check):
    """One res["moe"] entry: the case, the way, the timing (time_fn's keys) and the check."""
    slots = tokens * MOE_TOPK
    ops = 2 * slots * MOE_N * MOE_K
    return {"experts": experts, "tokens": tokens, "topk": MOE_TOPK, "n": MOE_N, "k": MOE_K, "slots": slots,
            "used_experts": used, "way": way, "banks": nb, "launches": launches, **t,
            "tflops": ops / (t["ms"] * 1e-3) / 1e12, "check": check}


def moe_check(torch, out, sample, ref, tol):
    """The sampled slots of `out` against the f32 reference rows: rel_to_max over all of them."""
    got = out[sample].float()
    rel = float(((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item())
    # NaN/Inf (an unwritten or overflowed output) fails, and is written as null: the bench's JSON.parse
    # refuses NaN.
    ok = math.isfinite(rel)
    return {"rel_to_max": rel if ok else None, "tol": tol, "pass": ok and rel < tol, "samples": len(sample) * ref.shape[1]}


def check_text(check):
    """A check as the log prints it: "rel 1.2e-03 ok", "rel nan WRONG" for a non-finite one."""
    rel = check["rel_to_max"]
    return f"rel {float('nan') if rel is None else rel:.1e} {'ok' if check['pass'] else 'WRONG'}"


def moe_bench(torch, dev, g, res):
    """res["moe"]: the per-expert f16 loop and bf16 torch._grouped_mm at every MOE_CASES case (one entry per
    case and way); res["moe_notes"]: what was skipped and why. Weights W [E, N, K] (one Linear weight per
    expert, K contiguous), random normal, banks_for banks rotated as the dense GEMMs rotate theirs."""
    res["moe"], res["moe_notes"] = [], []
    n, k, topk = MOE_N, MOE_K, MOE_TOPK

    def note(text):
        res["moe_notes"].append(text)
        print(f"moe     {text}", flush=True)

    gmm = getattr(torch, "_grouped_mm", None)
    if gmm is None:
        note(f"torch {torch.__version__} has no torch._grouped_mm: the bf16 grouped way is skipped")
    else:
        try:
            res["grouped_mm_schema"] = str(torch.ops.aten._grouped_mm.default._schema)
        except Exception as e:  # only for the record
            res["grouped_mm_schema"] = f"(schema unavailable: {e})"
        print(f"moe     torch._grouped_mm: {res['grouped_mm_schema']}", flush=True)
    for experts in sorted({e for e, _ in MOE_CASES}):
        cases = [t for e, t in MOE_CASES if e == experts]
        nb = banks_for(experts * n * k * 2)
        w16 = [torch.randn((experts, n, k), device=dev, dtype=torch.float16, generator=g) for _ in range(nb)]
        prep = {}
        for tokens in cases:
            slots = tokens * topk
            ids = moe_routing(tokens, experts, topk)
            x16 = torch.randn((tokens, k), device=dev, dtype=torch.float16, generator=g)
            # f32 reference rows at 16 slots spread over the output, from bank 0's f16 operands.
            sample = sorted({round(i * (slots - 1) / 15) for i in range(16)})
            ref = torch.stack([x16[s // topk].float() @ w16[0][ids[s]].float().t() for s in sample])
            prep[tokens] = (ids, x16, sample, ref)
            try:
                groups = moe_groups(ids, experts, topk)
                used = [(e, torch.tensor(b, device=dev, dtype=torch.long),
                         torch.tensor([slot // topk for slot in b], device=dev, dtype=torch.long))
                        for e, b in enumerate(groups["buckets"]) if b]
                out = torch.empty((slots, n), device=dev, dtype=torch.float16)

                def loop(i, used=used, out=out, x16=x16):
                    w = w16[i % nb]
                    for e, dst, src in used:
                        out.index_copy_(0, dst, x16.index_select(0, src) @ w[e].t())
                    return out

                loop(0)
                check = moe_check(torch, out, sample, ref, 1e-2)
                launches = 3 * len(used)  # gather, GEMM, scatter per expert
                t = time_fn(loop, launches)
                rec = moe_record(experts, tokens, "f16-loop", nb, launches, len(used), t, check)
                res["moe"].append(rec)
                print(f"moe     e={experts:3d} tokens={tokens:5d} f16 loop         {t['ms']:8.4f} ms "
                      f"{rec['tflops']:7.1f} TFLOP/s  ({len(used)} experts, {t['calls']} calls a batch, queued "
                      f"ahead {t['queued_ahead']}; one at a time {t['ms_call']:.4f} ms)  "
                      f"{check_text(check)}", flush=True)
            except Exception as e:
                note(f"e={experts} tokens={tokens} f16 loop failed: {type(e).__name__}: {e}")
                torch.cuda.empty_cache()
        if gmm is None:
            del w16
            torch.cuda.empty_cache()
            continue
        # The same weights in bf16 (rounded from the f16 banks), as [E, K, N] views: W_e^T per group.
        wbf = [w.to(torch.bfloat16) for w in w16]
        del w16
        torch.cuda.empty_cache()
        wt = [w.transpose(-2, -1) for w in wbf]
        for tokens in cases:
            ids, x16, sample, ref = prep[tokens]
            slots = tokens * topk
            xb = x16.to(torch.bfloat16)
            errors = []
            done = None
            # The offs keyword, then positionally; unpadded groups, then groups padded to GROUP_ALIGN rows.
            for align in (1, GROUP_ALIGN):
                gr = moe_groups(ids, experts, topk, align)
                tok = torch.tensor(gr["tokens"], device=dev, dtype=torch.long)
                dest = torch.tensor(gr["dest"], device=dev, dtype=torch.long)
                offs = torch.tensor(gr["offsets"], device=dev, dtype=torch.int32)
                # One spare row takes the padding rows' outputs.
                out = torch.empty((slots + 1, n), device=dev, dtype=torch.bfloat16)
                for form in ("offs=", "positional"):
                    def grouped(i, tok=tok, dest=dest, offs=offs, out=out, form=form, xb=xb):
                        a = xb.index_select(0, tok)
                        b = wt[i % len(wt)]
                        y = gmm(a, b, offs=offs) if form == "offs=" else gmm(a, b, offs)
                        out.index_copy_(0, dest, y)
                        return out

                    try:
                        grouped(0)
                        torch.cuda.synchronize()
                        done = (grouped, align, form, out)
                        break
                    except Exception as e:
                        errors.append(f"align {align}, {form}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
                if done:
                    break
            if not done:
                note(f"e={experts} tokens={tokens} torch._grouped_mm refused every form: {'; '.join(errors)}")
                continue
            grouped, align, form, out = done
            try:
                check = moe_check(torch, out, sample, ref, 3e-2)
                t = time_fn(grouped, 4)  # gather, the grouped GEMM (and its setup), scatter
                used = sum(1 for c in moe_groups(ids, experts, topk)["counts"] if c)
                rec = moe_record(experts, tokens, "bf16-grouped_mm", len(wt), 4, used, t, check)
                rec.update({"group_align": align, "call": form, **({"refused": errors} if errors else {})})
                res["moe"].append(rec)
                print(f"moe     e={experts:3d} tokens={tokens:5d} bf16 _grouped_mm {t['ms']:8.4f} ms "
                      f"{rec['tflops']:7.1f} TFLOP/s  (groups padded to {align}, {t['calls']} calls a batch, "
                      f"queued ahead {t['queued_ahead']}; one at a time {t['ms_call']:.4f} ms)  "
                      f"{check_text(check)}", flush=True)
            except Exception as e:
                note(f"e={experts} tokens={tokens} bf16 _grouped_mm failed: {type(e).__name__}: {e}")
        del wbf, wt
        torch.cuda.empty_cache()


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--self-test"]:
        self_test()
        return
    if argv[:1] == ["--routing"]:
        # "T,E,K[,SEED]": the MoE routing as JSON (test/torchMoe.test.ts compares it with moeRouting).
        t, e, kk, *seed = (int(v, 0) for v in argv[1].split(","))
        print(json.dumps(moe_routing(t, e, kk, *seed)))
        return
    flags = {a for a in argv if a.startswith("--")}
    unknown = flags - {"--no-moe", "--moe-only"}
    if unknown:
        raise SystemExit(f"unknown flag(s) {sorted(unknown)}")
    pos = [a for a in argv if not a.startswith("--")]
    import torch

    out_path = pos[0] if pos else "torch.json"
    # Optional "m,n,k": that one shape only (a short command when device time is short); m may list several
    # rows counts, "32/128/512/2048,4096,4096".
    ms, nk = MS, NK
    if len(pos) > 1:
        m_list, n, k = pos[1].split(",")
        ms, nk = [int(m) for m in m_list.split("/")], [(int(n), int(k))]
    dense = "--moe-only" not in flags
    if not dense:
        nk = []
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
        nb16 = banks_for(2 * n * k)
        w16 = [torch.randn((k, n), device=dev, dtype=torch.float16, generator=g) for _ in range(nb16)]
        # The f16 weight as nn.Linear holds it too, W [n,k] row-major read as W^T (cuBLAS's TN case).
        w16t = [torch.randn((n, k), device=dev, dtype=torch.float16, generator=g).t() for _ in range(nb16)]
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
            # torch at its best: both weight layouts timed, the faster one is the shape's f16_mm entry (the
            # report and the ratios read one per shape); each layout's figures are kept under "layouts".
            layouts = {}
            for layout, bank in (("kn", w16), ("nk_t", w16t)):
                t16 = time_fn(lambda i, bank=bank: a16 @ bank[i % nb16])
                layouts[layout] = t16
                print(f"f16 mm  m={m:5d} n={n:5d} k={k:5d} {layout:5s} {t16['ms']:8.4f} ms  "
                      f"{ops / (t16['ms'] * 1e-3) / 1e12:7.1f} TFLOP/s  (one at a time {t16['ms_call']:.4f} ms, "
                      f"{t16['calls']} calls a batch, queued ahead {t16['queued_ahead']})", flush=True)
            best = min(layouts, key=lambda name: layouts[name]["ms"])
            t16 = layouts[best]
            rec16 = {"m": m, "n": n, "k": k, "banks": nb16, "layout": best, **t16,
                     "tflops": ops / (t16["ms"] * 1e-3) / 1e12,
                     "layouts": {name: {"ms": v["ms"], "ms_call": v["ms_call"]} for name, v in layouts.items()}}
            res["f16_mm"].append(rec16)
        del w8, w8t, w16, w16t
        torch.cuda.empty_cache()
    if dense:
        # Device-to-device copy: bytes read + bytes written.
        nbytes = 2 * 1024**3
        src = torch.empty(nbytes, dtype=torch.uint8, device=dev).random_(0, 255, generator=g)
        dst = torch.empty_like(src)
        # A 2 GB copy takes about a millisecond: one launch's latency does not matter there.
        med, _ = time_one_at_a_time(lambda i: dst.copy_(src), reps=20, warmup=3)
        res["copy"] = {"bytes": nbytes, "ms": med, "gbs_read_plus_write": 2 * nbytes / (med * 1e-3) / 1e9}
        print(f"copy    {nbytes/1e9:.2f} GB  {med:.3f} ms  {res['copy']['gbs_read_plus_write']:.0f} GB/s (read+write)", flush=True)
        del src, dst
        torch.cuda.empty_cache()
    # Written before the MoE step too, so a failure there keeps the dense figures.
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1)
    if "--no-moe" not in flags:
        moe_bench(torch, dev, g, res)
        with open(out_path, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
