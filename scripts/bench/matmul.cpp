// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0
//
// scripts/bench/matmul.cpp: y = W x for a random Q4_K weight W (K x N) and B
// rows of x, W in the CPU buffer (the file's layout) or in ggml's CPU repack
// buffer, on THREADS threads (default 1): the time of one product, averaged
// over 20, and a hash of its output. Built and run by scripts/bench/matmul.
// With GROUP, the B rows come in groups of GROUP rows that must each be
// computed as alone (GGML_HINT_SRC1_ROW_GROUPS: the streams of a batch), and
// it says whether every group's output is the product of its rows alone.
//
//   matmul K N B REPACK [THREADS [GROUP]]
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-harness.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
#include <random>

static ggml_backend_buffer_type_t repack_buft() {
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    auto reg = ggml_backend_dev_backend_reg(dev);
    auto f = (ggml_backend_dev_get_extra_bufts_t) ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
    for (auto * p = f(dev); p && *p; ++p) if (!strcmp(ggml_backend_buft_name(*p), "CPU_REPACK")) return *p;
    return nullptr;
}

// y = W x for x's rows `first` to `first + rows`, in row groups of `group`
// rows where group > 0; with `ms`, timed.
static std::vector<uint8_t> product(ggml_backend_t be, ggml_tensor * W, const std::vector<float> & xf, int first, int rows, int group, double * ms) {
    const int K = W->ne[0];
    ggml_context * ctx = ggml_init({ 64 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true });
    ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, rows);
    ggml_tensor * y = ggml_mul_mat(ctx, W, x);
    if (group > 0) ggml_mul_mat_set_row_groups(y, group);
    ggml_cgraph * gf = ggml_new_graph(ctx); ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t abuf = ggml_backend_alloc_ctx_tensors(ctx, be);
    ggml_backend_tensor_set(x, xf.data() + (size_t) first * K, 0, (size_t) rows * K * 4);
    if (ms) *ms = time_graph_ms(be, gf); else ggml_backend_graph_compute(be, gf);
    std::vector<uint8_t> out(ggml_nbytes(y));
    ggml_backend_tensor_get(y, out.data(), 0, out.size());
    ggml_backend_buffer_free(abuf);
    ggml_free(ctx);
    return out;
}

int main(int argc, char ** argv) {
    int K = atoi(argv[1]), N = atoi(argv[2]), B = atoi(argv[3]); bool repack = atoi(argv[4]); int threads = argc > 5 ? atoi(argv[5]) : 1;
    int group = argc > 6 ? atoi(argv[6]) : 0;
    ggml_type wt = GGML_TYPE_Q4_K;
    ggml_init_params p{ 16 * ggml_tensor_overhead(), nullptr, true };
    ggml_context * wctx = ggml_init(p);
    ggml_tensor * W = ggml_new_tensor_2d(wctx, wt, K, N);
    ggml_backend_buffer_type_t bt = repack ? repack_buft() : ggml_backend_cpu_buffer_type();
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, bt);
    std::vector<float> wf((size_t)K * N); std::mt19937 rng(1); std::normal_distribution<float> nd(0, 0.02f);
    for (auto & v : wf) v = nd(rng);
    std::vector<uint8_t> q(ggml_nbytes(W));
    ggml_quantize_chunk(wt, wf.data(), q.data(), 0, N, K, nullptr);
    ggml_backend_tensor_set(W, q.data(), 0, q.size());
    ggml_backend_t be = ggml_backend_cpu_init(); ggml_backend_cpu_set_n_threads(be, threads);
    std::vector<float> xf((size_t)K * B); for (auto & v : xf) v = nd(rng);
    double ms = 0;
    const std::vector<uint8_t> y = product(be, W, xf, 0, B, group, &ms);
    printf("K=%d N=%d B=%d repack=%d threads=%d", K, N, B, repack, threads);
    if (group > 0) {
        bool alone = true;
        for (int g0 = 0; g0 < B; g0 += group) {
            const std::vector<uint8_t> own = product(be, W, xf, g0, std::min(group, B - g0), 0, nullptr);
            alone = alone && !memcmp(own.data(), y.data() + (size_t) g0 * N * 4, own.size());
        }
        printf(" in groups of %d (each as alone: %s)", group, alone ? "yes" : "NO");
    }
    printf(": %.2f ms per call, %.2f ms per row, %.1f GB/s weights, output %016llx\n", ms, ms / B, ggml_nbytes(W) / ms / 1e6, bytes_hash(y));
    (void) wbuf;
}
