#!/usr/bin/env python3
"""Machine code of the Vulkan pipelines a command compiled, from the NVIDIA driver's shader disk cache.

There is no profiler for Vulkan compute on the lent machine, but its driver keeps what it compiled in a disk
cache (__GL_SHADER_DISK_CACHE_PATH, set by `h200.sh sass:...`). This scans every file there for embedded
CUDA ELF images (e_machine 190), plain or inside a zlib/lzma stream, writes each one out, and runs the
image's cuobjdump on it: the register count, stack frame and spills per kernel (-res-usage) and the SASS.
Everything lands in one tarball (the device tool returns few files) plus a summary on stdout.

Usage: nvsass.py CACHE_DIR OUT_TARBALL
"""
import io
import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import zlib

EM_CUDA = 190


def elf_images(buf: bytes):
    """(offset, bytes) of every 64-bit little-endian CUDA ELF image in buf, sized from its headers."""
    at = 0
    while True:
        at = buf.find(b"\x7fELF", at)
        if at < 0:
            return
        head = buf[at : at + 64]
        if len(head) == 64 and head[4] == 2 and head[5] == 1:
            (machine,) = struct.unpack_from("<H", head, 18)
            phoff, shoff = struct.unpack_from("<QQ", head, 32)
            phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", head, 54)
            end = max(phoff + phentsize * phnum, shoff + shentsize * shnum)
            if machine == EM_CUDA and 64 <= end <= len(buf) - at:
                yield at, buf[at : at + end]
        at += 4


def streams(buf: bytes):
    """buf itself, then whatever zlib or xz streams inside it decode to (cache entries may be compressed)."""
    yield "raw", buf
    for m in re.finditer(rb"\x78[\x01\x5e\x9c\xda]", buf):
        try:
            d = zlib.decompressobj()
            out = d.decompress(buf[m.start() :], 1 << 28)
            if len(out) > 256:
                yield f"zlib@{m.start()}", out
        except zlib.error:
            pass
    for m in re.finditer(rb"\xfd7zXZ\x00", buf):
        try:
            yield f"xz@{m.start()}", lzma.LZMADecompressor().decompress(buf[m.start() :])
        except lzma.LZMAError:
            pass


def tool(name: str) -> str | None:
    for d in ("", "/usr/local/cuda/bin/", "/opt/cuda/bin/"):
        p = shutil.which(d + name) if not d else (d + name if os.path.exists(d + name) else None)
        if p:
            return p
    return None


def main() -> int:
    cache, tarball = sys.argv[1], sys.argv[2]
    work = tarball + ".d"
    os.makedirs(work, exist_ok=True)
    cuobjdump = tool("cuobjdump")
    print(f"cuobjdump: {cuobjdump}")
    listing, seen, n = [], set(), 0
    for root, _, files in os.walk(cache):
        for f in sorted(files):
            path = os.path.join(root, f)
            buf = open(path, "rb").read()
            found = 0
            for how, data in streams(buf):
                for off, img in elf_images(data):
                    key = zlib.crc32(img)
                    if key in seen:
                        continue
                    seen.add(key)
                    found += 1
                    n += 1
                    name = os.path.join(work, f"img{n:03d}.cubin")
                    open(name, "wb").write(img)
                    if cuobjdump:
                        for flag, ext in (("-res-usage", "res"), ("-sass", "sass")):
                            r = subprocess.run([cuobjdump, flag, name], capture_output=True, text=True)
                            open(f"{name}.{ext}.txt", "w").write(r.stdout + r.stderr)
                        sass = open(f"{name}.sass.txt").read()
                        ops = {
                            k: len(re.findall(k, sass))
                            for k in ("HMMA", "LDG", "LDS", "LDSM", "STS", "STL", "LDL", "BAR", "STG")
                        }
                        res = " ".join(open(f"{name}.res.txt").read().split())[-300:]
                        print(f"img{n:03d} {len(img)} B from {f} ({how}+{off}): {ops} | {res}")
            listing.append(f"{len(buf):>10} {path} elf={found} head={buf[:16].hex()}")
    open(os.path.join(work, "listing.txt"), "w").write("\n".join(listing) + "\n")
    print(f"{len(listing)} cache files, {n} CUDA images")
    print("\n".join(listing[:40]))
    # The raw cache too (small: a few pipelines), for a second look offline.
    with tarfile.open(tarball, "w:xz") as t:
        t.add(work, arcname="sass")
        t.add(cache, arcname="cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
