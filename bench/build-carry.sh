#!/usr/bin/env bash
# Build the carry kit for running the bench on a lent GPU machine without node (see docs/benchmarks.md):
#   .gl/   libvulkan1 (amd64 .deb), the Vulkan loader that machine lacks
#   .gpu/bench/  node.xz (this machine's node, xz'ed), webgpu/ (index.js, package.json, linux-x64 dawn.node.xz),
#          bench.mjs and probe.mjs (esbuild bundles with `webgpu` left external)
# All three folders are git-ignored; `run` carries them (64 MiB limit in all).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gl .gpu/bench/webgpu/dist/linux-x64
if ! ls .gl/libvulkan1_*_amd64.deb >/dev/null 2>&1; then
  mkdir -p /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update >/dev/null
  (cd .gl && apt-get $o download libvulkan1)
fi
[ -s .gpu/bench/node.xz ] || xz -T2 -3 -c "$(command -v node)" > .gpu/bench/node.xz
cp node_modules/webgpu/index.js node_modules/webgpu/package.json .gpu/bench/webgpu/
[ -s .gpu/bench/webgpu/dist/linux-x64/dawn.node.xz ] ||
  xz -T2 -6 -c node_modules/webgpu/dist/linux-x64/dawn.node > .gpu/bench/webgpu/dist/linux-x64/dawn.node.xz
for entry in bench probe; do
  npx esbuild "bench/$entry.ts" --bundle --platform=node --format=esm --target=node20 \
    --external:webgpu --outfile=".gpu/bench/$entry.mjs" --log-level=warning
done
du -sh .gl .gpu/bench
