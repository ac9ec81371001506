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
// With SEED (scripts/engine/same-bits), the inputs come from that seed with
// Q scaled by QSCALE (large scores take expf off its fast path) and values
// kernels get wrong: rows and entries of +0 and -0, keys of zeros, mask
// holes of -inf and mask values of -0, -3.5 and 60000, a row masked whole;
// with NOMASK, no mask at all. The call is computed once, not timed.
//
//   attention D NQ H HKV NKV KVBITS [THREADS [FILLED [WINDOW [SEED [QSCALE [NOMASK]]]]]]
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
// t's values as floats (t F32 or F16), and back.
static std::vector<float> get_as_f32(const ggml_tensor * t) {
    std::vector<float> f(ggml_nelements(t));
    if (t->type == GGML_TYPE_F32) { ggml_backend_tensor_get(t, f.data(), 0, ggml_nbytes(t)); return f; }
    std::vector<ggml_fp16_t> h(f.size());
    ggml_backend_tensor_get(t, h.data(), 0, ggml_nbytes(t));
    ggml_fp16_to_fp32_row(h.data(), f.data(), f.size());
    return f;
}

static void set_from_f32(ggml_tensor * t, const std::vector<float> & f) {
    if (t->type == GGML_TYPE_F32) { ggml_backend_tensor_set(t, f.data(), 0, ggml_nbytes(t)); return; }
    std::vector<ggml_fp16_t> h(f.size()); ggml_fp32_to_fp16_row(f.data(), h.data(), f.size());
    ggml_backend_tensor_set(t, h.data(), 0, ggml_nbytes(t));
}

// Random normal values into t.
static void fill_random(ggml_tensor * t, std::mt19937 & rng) {
    std::normal_distribution<float> nd(0, 1.0f);
    std::vector<float> f(ggml_nelements(t));
    for (auto & x : f) x = nd(rng);
    set_from_f32(t, f);
}

// Q scaled, with signed zeros here and there and every 7th row all zeros;
// every 13th key all zeros.
static void add_awkward_values(ggml_tensor * q, ggml_tensor * k_ring, int D, float qscale, std::mt19937 & rng) {
    std::vector<float> f = get_as_f32(q);
    for (auto & x : f) {
        x *= qscale;
        if (rng() % 50 == 0) x = (rng() & 1) ? -0.0f : 0.0f;
    }
    for (size_t r = 0; r < f.size() / D; r += 7) for (int d = 0; d < D; ++d) f[r * D + d] = (d & 1) ? -0.0f : 0.0f;
    set_from_f32(q, f);
    std::vector<float> kf = get_as_f32(k_ring);
    for (size_t row = 0; row < kf.size() / D; row += 13) for (int d = 0; d < D; ++d) kf[row * D + d] = (d % 3) ? -0.0f : 0.0f;
    set_from_f32(k_ring, kf);
}

// The mask of NQ rows that are the last NQ of `keys` positions, each seeing
// the `window` keys up to its own (0: all `keys`). Awkward: holes and odd
// values among the keys seen, and row 3 masked whole.
static std::vector<ggml_fp16_t> make_mask(int NQ, int NKV, int keys, int window, bool awkward, std::mt19937 & rng) {
    const ggml_fp16_t odd[4] = { ggml_fp32_to_fp16(-INFINITY), ggml_fp32_to_fp16(-0.0f), ggml_fp32_to_fp16(-3.5f),
                                 ggml_fp32_to_fp16(60000.0f) };
    std::vector<ggml_fp16_t> mz((size_t) NQ * NKV, ggml_fp32_to_fp16(0.0f));
    for (int r = 0; r < NQ; ++r) {
        const int pos = keys - NQ + r;
        for (int c = 0; c < NKV; ++c) {
            ggml_fp16_t & m = mz[(size_t) r * NKV + c];
            const bool seen = c < keys && (window == 0 || (c <= pos && pos - c < window));
            if (!seen || (awkward && r == 3)) {
                m = ggml_fp32_to_fp16(-INFINITY);
            } else if (awkward) {
                const unsigned u = rng() % 20;
                if (u < 4) m = odd[u];
            }
        }
    }
    return mz;
}

int main(int argc, char ** argv) {
    int D = atoi(argv[1]), NQ = atoi(argv[2]), H = atoi(argv[3]), HKV = atoi(argv[4]), NKV = atoi(argv[5]), bits = atoi(argv[6]);
    int threads = argc > 7 ? atoi(argv[7]) : 1; int filled = argc > 8 ? atoi(argv[8]) : 1 << 30; int window = argc > 9 ? atoi(argv[9]) : 0;
    const bool awkward = argc > 10;
    const unsigned seed = awkward ? atoi(argv[10]) : 1;
    const float qscale = argc > 11 ? atof(argv[11]) : 1.0f;
    const bool nomask = argc > 12;
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
    ggml_tensor * o = ggml_flash_attn_ext(ctx, q, k, v, nomask ? nullptr : m, 1.0f / std::sqrt((float) D), 0.0f, 0.0f);
    ggml_cgraph * gf = ggml_new_graph(ctx); ggml_build_forward_expand(gf, o);
    ggml_backend_t be = ggml_backend_cpu_init(); ggml_backend_cpu_set_n_threads(be, threads);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    std::mt19937 rng(seed);
    fill_random(q, rng); fill_random(k_ring, rng); fill_random(v_ring, rng);
    if (awkward) add_awkward_values(q, k_ring, D, qscale, rng);
    const int keys = filled < NKV ? filled : NKV;
    const std::vector<ggml_fp16_t> mz = make_mask(NQ, NKV, keys, window, awkward, rng);
    ggml_backend_tensor_set(m, mz.data(), 0, ggml_nbytes(m));
    double ms = 0;
    if (awkward) ggml_backend_graph_compute(be, gf); else ms = time_graph_ms(be, gf);
    const unsigned long long hsh = tensor_hash(o);
    printf("D=%d NQ=%d H=%d HKV=%d NKV=%d filled=%d window=%d kv=f%d threads=%d: %.3f ms per call, %.1f ns per query row and key, output %016llx\n",
           D, NQ, H, HKV, NKV, keys, window, bits, threads, ms, ms * 1e6 / ((double) NQ * H * keys), hsh);
    (void) buf;
}
