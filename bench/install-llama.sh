#!/usr/bin/env bash
# Install llama.cpp's Vulkan backend for the bench's llama.cpp peer (bench/llama.ts; never an app dependency,
# never in CI's `npm ci`) into the git-ignored bench/.llama, and build its harness (bench/llama/mmq-llama.c):
#   lib/      libggml-base.so and libggml-vulkan.so from the npm package @node-llama-cpp/linux-x64-vulkan
#             (prebuilt ggml, Vulkan backend with NV_coopmat2, KHR coopmat and integer dot shaders)
#   include/  ggml's headers from the llama.cpp source that node-llama-cpp (same version) ships as a git
#             bundle (llama/gitRelease.bundle): checked against the binaries below
#   bin/mmq-llama  the harness, linked against lib/ (RUNPATH $ORIGIN/../lib)
#   lavapipe/ (--lavapipe only) Debian's Mesa lavapipe, unpacked, not installed: a CPU Vulkan driver that
#             ggml-vulkan accepts, to run the harness end to end without a GPU (Chromium's SwiftShader lacks
#             16-bit storage, which ggml-vulkan requires)
# bench/build-carry.sh packs lib/ and bin/ for the lent GPU machine.
#   bench/install-llama.sh [--lavapipe] [VERSION]   (default 3.22.1)
set -euo pipefail
cd "$(dirname "$0")/.."
lavapipe=0
[ "${1:-}" = --lavapipe ] && { lavapipe=1; shift; }
version=${1:-3.22.1}
dir=bench/.llama
mkdir -p "$dir/pkg" "$dir/lib" "$dir/include" "$dir/bin"
(cd "$dir/pkg" && for p in @node-llama-cpp/linux-x64-vulkan node-llama-cpp; do
  tgz="$(echo "$p" | sed 's#^@##; s#/#-#')-$version.tgz"
  [ -s "$tgz" ] || npm pack --silent "$p@$version" >/dev/null
done)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar xzf "$dir/pkg/node-llama-cpp-linux-x64-vulkan-$version.tgz" -C "$tmp" package/bins package/package.json
tar xzf "$dir/pkg/node-llama-cpp-$version.tgz" -C "$tmp" package/llama package/package.json --transform 's#^package#src#'
bins=$tmp/package/bins/linux-x64-vulkan
cp "$bins/libggml-base.so" "$bins/libggml-vulkan.so" "$dir/lib/"
# The llama.cpp release both packages name must be the same one.
release_bin=$(node -p "require('$bins/_nlcBuildMetadata.json').buildOptions.llamaCpp.release")
release_src=$(node -p "require('$tmp/src/llama/binariesGithubRelease.json').release")
[ "$release_bin" = "$release_src" ] ||
  { echo "install-llama: the binaries are llama.cpp $release_bin, the source $release_src" >&2; exit 1; }
git clone --quiet --no-checkout "$tmp/src/llama/gitRelease.bundle" "$tmp/llama.cpp"
git -C "$tmp/llama.cpp" archive HEAD ggml/include ggml/CMakeLists.txt | tar x -C "$tmp"
cp "$tmp"/ggml/include/*.h "$dir/include/"
header_version=$(awk '/set\(GGML_VERSION_(MAJOR|MINOR|PATCH) /{ v = v (v ? "." : "") $2 } END { gsub(/\)/, "", v); print v }' \
  "$tmp/ggml/CMakeLists.txt")
gcc -O2 -std=gnu11 -Wall -Wextra -Werror -I"$dir/include" bench/llama/mmq-llama.c -o "$dir/bin/mmq-llama" \
  -L"$dir/lib" -lggml-vulkan -lggml-base -lm -Wl,-rpath,'$ORIGIN/../lib' \
  -Wl,--export-dynamic-symbol=vkGetInstanceProcAddr # the harness's wrapper, which libggml-vulkan.so resolves
# The binaries' ggml must be the headers' (the harness also checks the op and type tables at start).
lib_version=$("$dir/bin/mmq-llama" --version | node -e "process.stdout.write(JSON.parse(require('fs').readFileSync(0, 'utf8')).ggml)")
[ "$lib_version" = "$header_version" ] ||
  { echo "install-llama: libggml-base.so is ggml $lib_version, the headers $header_version" >&2; exit 1; }
echo "{\"nodeLlamaCpp\":\"$version\",\"llamaCppRelease\":\"$release_bin\",\"ggml\":\"$lib_version\"}" > "$dir/VERSION.json"
# What the GPU machine's C libraries must provide: the newest symbol versions these files ask for.
for f in "$dir/bin/mmq-llama" "$dir/lib/libggml-base.so" "$dir/lib/libggml-vulkan.so"; do
  echo "$(basename "$f") needs $(objdump -T "$f" | grep -oE 'GLIBC_[0-9.]+|GLIBCXX_[0-9.]+' | sort -uV |
    awk -F_ '{ max[$1] = $0 } END { print max["GLIBC"], max["GLIBCXX"] }')"
done
if [ "$lavapipe" = 1 ]; then
  mkdir -p "$dir/lavapipe"
  (cd "$tmp" && apt-get download mesa-vulkan-drivers >/dev/null 2>&1)
  dpkg -x "$tmp"/mesa-vulkan-drivers_*.deb "$dir/lavapipe"
  so=$(cd "$dir/lavapipe" && pwd)/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so
  printf '{"file_format_version":"1.0.0","ICD":{"api_version":"1.3.0","library_path":"%s"}}\n' "$so" > "$dir/lavapipe/lvp_icd.json"
  echo "lavapipe: VK_ICD_FILENAMES=$dir/lavapipe/lvp_icd.json GGML_VK_VISIBLE_DEVICES=0"
fi
echo "llama.cpp $release_bin (ggml $lib_version, node-llama-cpp $version) in $dir"
