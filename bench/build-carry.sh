#!/usr/bin/env bash
# Build the carry kit for running the bench on a lent GPU machine without node (see docs/benchmarks.md):
#   .gl/   the Vulkan loader and the glvnd libraries that machine lacks (amd64 .debs; with libvulkan1 alone
#          the loader cannot load NVIDIA's ICD, libGLX_nvidia.so.0: `git show lab-final:docs/benchmarks.md`,
#          "H200 probe")
#   .gpu/bench/  node.xz (this machine's node, xz'ed), webgpu/ (index.js, package.json, linux-x64 dawn.node.xz),
#          zstd/, bench.mjs, apptune.mjs and probe.mjs (esbuild bundles with `webgpu` left external)
# All three folders are git-ignored; `run` carries them (64 MiB limit in all).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gl .gpu/bench/webgpu/dist/linux-x64
GL_DEBS="libvulkan1 libglvnd0 libglx0 libgl1 libegl1 libgles2 libopengl0"
missing=""
for d in $GL_DEBS; do ls .gl/"${d}"_*_amd64.deb >/dev/null 2>&1 || missing="$missing $d"; done
if [ -n "$missing" ]; then
  mkdir -p /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update >/dev/null
  # shellcheck disable=SC2086
  (cd .gl && apt-get $o download $missing)
fi
[ -s .gpu/bench/node.xz ] || xz -T2 -3 -c "$(command -v node)" > .gpu/bench/node.xz
cp node_modules/webgpu/index.js node_modules/webgpu/package.json .gpu/bench/webgpu/
[ -s .gpu/bench/webgpu/dist/linux-x64/dawn.node.xz ] ||
  xz -T2 -6 -c node_modules/webgpu/dist/linux-x64/dawn.node > .gpu/bench/webgpu/dist/linux-x64/dawn.node.xz
# zstd(1) and the libraries it links (the sass step decodes the driver's shader cache with it when the
# image's pyarrow cannot).
mkdir -p .gpu/bench/zstd
cp "$(command -v zstd)" $(ldd "$(command -v zstd)" | awk '/liblzma|liblz4/{print $3}') .gpu/bench/zstd/
# lab.ts exists only while an experiment is under way (docs/benchmarks.md names the commits).
for entry in bench apptune probe $([ -f bench/lab.ts ] && echo lab); do
  npx esbuild "bench/$entry.ts" --bundle --platform=node --format=esm --target=node20 \
    --external:webgpu --outfile=".gpu/bench/$entry.mjs" --log-level=warning
done
du -sh .gl .gpu/bench
