# shellcheck shell=bash
# scripts/lib/ggml-harness.sh: sourced by scripts/bench/matmul,
# scripts/bench/attention and scripts/engine/same-bits.
# build_ggml_harness SOURCE.cpp TARGET_DIR BIN compiles a one-file ggml
# harness against the ggml that cargo built last under TARGET_DIR
# (target/release: scripts/setup's build, tuned to this CPU) into BIN; it
# ends the script with a message when there is no such build.
build_ggml_harness() {
    local source="$1" target="$2" bin="$3" out
    # The newest of the builds cargo keeps there (one per feature set):
    # the one the last `cargo build` made.
    out=$(ls -t "$target"/build/transcribe-cpp-sys-*/out/lib/libggml-cpu.a 2>/dev/null | head -n 1)
    out="${out%/lib/libggml-cpu.a}"
    if [ -z "$out" ] || [ ! -d "$out" ]; then
        echo "$(basename "$0"): no transcribe.cpp build under $target (run scripts/setup)" >&2
        exit 1
    fi
    g++ -O2 -std=c++17 "$source" -I"$out/include" \
        "$out/lib/libggml.a" "$out/lib/libggml-cpu.a" "$out/lib/libggml-base.a" -lpthread -fopenmp -o "$bin"
}
