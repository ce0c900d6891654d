"""Native baselines on the same GPU, in the same command as the WebGPU bench.

torch._int_mm (int8 x int8 -> int32, cuBLASLt) at the bench's prefill shapes, f16 torch.matmul for
reference, and a device-to-device copy for the bandwidth ceiling. Timed with CUDA events: warm-up first,
then the median of many timed calls, rotating through several weight banks so the weight is read cold
(each bank set is several times the 60 MB L2). Random data, never zeros. Writes JSON to argv[1].
"""

import json
import statistics
import sys
import time

import torch

MS = [32, 128, 512, 2048]
NK = [(4096, 4096), (11008, 4096), (4096, 11008)]
L2_BYTES = 60 * 1024 * 1024


def time_fn(fn, reps=50, warmup=10):
    """Median and min ms of `fn(i)` over `reps` calls, each bracketed by CUDA events."""
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


def banks_for(bytes_each):
    return max(2, min(16, (4 * L2_BYTES) // max(1, bytes_each) + 1))


def main():
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
                med, mn = time_fn(lambda i: torch._int_mm(a8, bank[i % nb]))
                rec = {"m": m, "n": n, "k": k, "layout": layout, "banks": nb, "ms": med, "ms_min": mn,
                       "tops": ops / (med * 1e-3) / 1e12, "exact": ex}
                res["int_mm"].append(rec)
                print(f"int_mm  m={m:5d} n={n:5d} k={k:5d} {layout:5s} {med:8.4f} ms  {rec['tops']:7.1f} TOPS  exact={ex}",
                      flush=True)
            nb16 = len(w16)
            med16, mn16 = time_fn(lambda i: a16 @ w16[i % nb16])
            rec16 = {"m": m, "n": n, "k": k, "banks": nb16, "ms": med16, "ms_min": mn16,
                     "tflops": ops / (med16 * 1e-3) / 1e12}
            res["f16_mm"].append(rec16)
            print(f"f16 mm  m={m:5d} n={n:5d} k={k:5d}  {med16:8.4f} ms  {rec16['tflops']:7.1f} TFLOP/s", flush=True)
        del w8, w8t, w16
        torch.cuda.empty_cache()
    # Device-to-device copy: bytes read + bytes written.
    nbytes = 2 * 1024**3
    src = torch.empty(nbytes, dtype=torch.uint8, device=dev).random_(0, 255, generator=g)
    dst = torch.empty_like(src)
    med, mn = time_fn(lambda i: dst.copy_(src), reps=20, warmup=3)
    res["copy"] = {"bytes": nbytes, "ms": med, "gbs_read_plus_write": 2 * nbytes / (med * 1e-3) / 1e9}
    print(f"copy    {nbytes/1e9:.2f} GB  {med:.3f} ms  {res['copy']['gbs_read_plus_write']:.0f} GB/s (read+write)", flush=True)
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
