# shellcheck shell=bash
# scripts/lib/ggml-harness.sh: sourced by scripts/bench/matmul,
# scripts/bench/attention and scripts/engine/same-bits.
#
# ggml_build_dirs BUILD prints the include and library directories of a
# ggml build, a line each, or fails: BUILD is a cargo target directory (the newest of the
# transcribe.cpp builds cargo keeps there, one per feature set: the one the
# last `cargo build` made) or a CMake build of the vendored ggml (with
# src/libggml.a).
#
# build_ggml_harness SOURCE.cpp BUILD BIN compiles a one-file ggml harness
# against such a build (target/release: scripts/setup's build, tuned to this
# CPU) into BIN; it ends the script with a message when there is no build.
ggml_build_dirs() {
    local build="$1" out
    if [ -f "$build/src/libggml.a" ]; then
        printf '%s\n' "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/vendor/transcribe-cpp-sys/ggml/include" "$build/src"
        return 0
    fi
    out=$(ls -t "$build"/build/transcribe-cpp-sys-*/out/lib/libggml-cpu.a 2>/dev/null | head -n 1)
    out="${out%/lib/libggml-cpu.a}"
    [ -n "$out" ] && [ -d "$out" ] || return 1
    printf '%s\n' "$out/include" "$out/lib"
}

build_ggml_harness() {
    local source="$1" build="$2" bin="$3" dirs=()
    mapfile -t dirs < <(ggml_build_dirs "$build")
    if [ "${#dirs[@]}" -ne 2 ]; then
        echo "$(basename "$0"): no transcribe.cpp or ggml build under $build (run scripts/setup)" >&2
        exit 1
    fi
    g++ -O2 -std=c++17 "$source" -I"${dirs[0]}" \
        "${dirs[1]}/libggml.a" "${dirs[1]}/libggml-cpu.a" "${dirs[1]}/libggml-base.a" -lpthread -fopenmp -o "$bin"
}
