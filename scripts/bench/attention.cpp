// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0
//
// scripts/bench/attention.cpp: one ggml_flash_attn_ext on the CPU, as the
// Voxtral Realtime graphs call it: NQ query rows of H heads of dimension D
// against NKV keys of HKV heads (F16 or F32, KVBITS), of which the first
// FILLED are unmasked (default all), the caches position-major as the
// engine's rings are; on THREADS threads (default 1). With WINDOW, the query
// rows are the last NQ positions filled and each sees the WINDOW keys up to
// its own (the encoder's sliding-window-causal mask). Prints
// the time of one call (averaged over 20), per query row and key, and a
// hash of its output. Built and run by scripts/bench/attention.
//
//   attention D NQ H HKV NKV KVBITS [THREADS [FILLED [WINDOW]]]
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-harness.h"
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <random>
int main(int argc, char ** argv) {
    int D = atoi(argv[1]), NQ = atoi(argv[2]), H = atoi(argv[3]), HKV = atoi(argv[4]), NKV = atoi(argv[5]), bits = atoi(argv[6]);
    int threads = argc > 7 ? atoi(argv[7]) : 1; int filled = argc > 8 ? atoi(argv[8]) : 1 << 30; int window = argc > 9 ? atoi(argv[9]) : 0;
    ggml_type kt = bits == 16 ? GGML_TYPE_F16 : GGML_TYPE_F32;
    ggml_context * ctx = ggml_init({ 64 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true });
    ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, D, NQ, H);
    // The caches as the engine keeps them: a ring of positions, each holding
    // all heads (position-major), read as [D, NKV, HKV] views.
    ggml_tensor * k_ring = ggml_new_tensor_3d(ctx, kt, D, HKV, NKV);
    ggml_tensor * v_ring = ggml_new_tensor_3d(ctx, kt, D, HKV, NKV);
    ggml_tensor * k = ggml_view_3d(ctx, k_ring, D, NKV, HKV, k_ring->nb[2], k_ring->nb[1], 0);
    ggml_tensor * v = ggml_view_3d(ctx, v_ring, D, NKV, HKV, v_ring->nb[2], v_ring->nb[1], 0);
    ggml_tensor * m = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, NKV, NQ);
    ggml_tensor * o = ggml_flash_attn_ext(ctx, q, k, v, m, 1.0f / std::sqrt((float) D), 0.0f, 0.0f);
    ggml_cgraph * gf = ggml_new_graph(ctx); ggml_build_forward_expand(gf, o);
    ggml_backend_t be = ggml_backend_cpu_init(); ggml_backend_cpu_set_n_threads(be, threads);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    std::mt19937 rng(1); std::normal_distribution<float> nd(0, 1.0f);
    auto fill = [&](ggml_tensor * t) {
        std::vector<float> f(ggml_nelements(t)); for (auto & x : f) x = nd(rng);
        if (t->type == GGML_TYPE_F32) { ggml_backend_tensor_set(t, f.data(), 0, ggml_nbytes(t)); return; }
        std::vector<ggml_fp16_t> h(f.size()); ggml_fp32_to_fp16_row(f.data(), h.data(), f.size());
        ggml_backend_tensor_set(t, h.data(), 0, ggml_nbytes(t));
    };
    fill(q); fill(k_ring); fill(v_ring);
    const int keys = filled < NKV ? filled : NKV;
    std::vector<ggml_fp16_t> mz(ggml_nelements(m), ggml_fp32_to_fp16(0.0f));
    for (int r = 0; r < NQ; ++r) {
        const int pos = keys - NQ + r;
        for (int c = 0; c < NKV; ++c) {
            const bool seen = c < keys && (window == 0 || (c <= pos && pos - c < window));
            if (!seen) mz[(size_t) r * NKV + c] = ggml_fp32_to_fp16(-INFINITY);
        }
    }
    ggml_backend_tensor_set(m, mz.data(), 0, ggml_nbytes(m));
    const double ms = time_graph_ms(be, gf);
    const unsigned long long hsh = tensor_hash(o);
    printf("D=%d NQ=%d H=%d HKV=%d NKV=%d filled=%d window=%d kv=f%d threads=%d: %.3f ms per call, %.1f ns per query row and key, output %016llx\n",
           D, NQ, H, HKV, NKV, keys, window, bits, threads, ms, ms * 1e6 / ((double) NQ * H * keys), hsh);
    (void) buf;
}
