#!/usr/bin/env python3
"""Machine code of the Vulkan pipelines a command compiled, from the NVIDIA driver's shader disk cache.

There is no profiler for Vulkan compute on the lent machine, but its driver keeps what it compiled in a disk
cache (__GL_SHADER_DISK_CACHE_PATH, set by h200.sh). As read from driver 580 on 2026-12-03: each GLCache
.bin file holds zstd frames; a pipeline's frame decodes to an "NVDANVVMNVuc" container whose first section
(u32 size at byte 0x4c, u32 offset at 0x50) is the raw SM90 instruction stream, which `nvdisasm -b SM90`
disassembles (CUDA 11.8's nvdisasm rejects some of driver 580's encodings; the image's CUDA 13 reads them).
Each pipeline's SASS, an opcode histogram and the highest register named land in one tarball (the device
tool returns few files), with a summary on stdout.

Usage: nvsass.py CACHE_DIR OUT_TARBALL
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
NVUC_MAGIC = b"NVDANVVMNVuc"


def zstd_frames(buf: bytes):
    """The decoded zstd frames of a cache file (each frame cut at the next magic; the CLI or the module)."""
    at = [m.start() for m in re.finditer(re.escape(ZSTD_MAGIC), buf)]
    for i, o in enumerate(at):
        chunk = buf[o : at[i + 1] if i + 1 < len(at) else len(buf)]
        out = None
        try:  # the lent machine's image has pyarrow (with zstd), but neither zstd(1) nor zstandard
            import pyarrow as pa  # type: ignore

            out = pa.CompressedInputStream(pa.BufferReader(chunk), "zstd").read()
        except Exception:
            try:
                r = subprocess.run(["zstd", "-d", "-c", "--no-check"], input=chunk, capture_output=True)
                out = r.stdout
            except OSError:
                pass
        if out:
            yield o, bytes(out)


def code_of(frame: bytes) -> bytes | None:
    """The raw instruction stream of an NVuc container (its first section), or None."""
    if not frame.startswith(NVUC_MAGIC) or len(frame) < 0x54:
        return None
    size, off = struct.unpack_from("<II", frame, 0x4C)
    if not (0 < size and off + size <= len(frame)):
        return None
    # Seen both ways: the stream starts at the offset, or 8 bytes after it (the first instruction's low
    # word is then S2R's 0x...7919 at +8). The opcode sits in the low 12 bits of each 16-byte word.
    code = frame[off : off + size]
    if code[:8] == bytes(8) and struct.unpack_from("<Q", code, 8)[0] & 0xFFF != 0:
        code = code[8:]
    # Whole instructions only (CUDA 13's nvdisasm refuses a stream that ends mid-instruction).
    return code[: len(code) // 16 * 16]


def tool(name: str) -> str | None:
    """`name` on PATH, else in the usual CUDA folders."""
    return shutil.which(name) or shutil.which(name, path="/usr/local/cuda/bin:/opt/cuda/bin")


def main() -> int:
    cache, tarball = sys.argv[1], sys.argv[2]
    work = tarball + ".d"
    os.makedirs(work, exist_ok=True)
    nvdisasm = tool("nvdisasm")
    print(f"nvdisasm: {nvdisasm}")
    listing, n = [], 0
    for root, _, files in os.walk(cache):
        for f in sorted(files):
            path = os.path.join(root, f)
            buf = open(path, "rb").read()
            found = 0
            for off, frame in zstd_frames(buf):
                code = code_of(frame)
                if code is None:
                    continue
                found += 1
                n += 1
                name = os.path.join(work, f"pipe{n:02d}")
                open(name + ".code", "wb").write(code)
                if not nvdisasm:
                    continue
                r = subprocess.run([nvdisasm, "-b", "SM90", name + ".code"], capture_output=True, text=True)
                open(name + ".sass", "w").write(r.stdout + r.stderr)
                ops: dict[str, int] = {}
                for m in re.finditer(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", r.stdout, re.M):
                    ops[m.group(1)] = ops.get(m.group(1), 0) + 1
                regs = max([int(x) for x in re.findall(r"\bR(\d+)\b", r.stdout)] + [-1]) + 1
                top = sorted(ops.items(), key=lambda kv: -kv[1])[:40]
                print(f"pipe{n:02d} {len(code) // 16} instructions, R0..R{regs - 1}, frame @{off} of {f}: {top}")
                if r.stderr:
                    print(f"  nvdisasm: {r.stderr.strip()[:200]}")
            listing.append(f"{len(buf):>10} {path} pipelines={found} head={buf[:16].hex()}")
    open(os.path.join(work, "listing.txt"), "w").write("\n".join(listing) + "\n")
    print(f"{len(listing)} cache files, {n} pipelines")
    with tarfile.open(tarball, "w:xz") as t:
        t.add(work, arcname="sass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
