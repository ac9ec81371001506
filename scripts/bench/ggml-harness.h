// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0
//
// scripts/bench/ggml-harness.h: what the one-file ggml harnesses of
// scripts/bench (matmul.cpp, attention.cpp) share.
#pragma once
#include "ggml.h"
#include "ggml-backend.h"
#include <chrono>
#include <cstdint>
#include <vector>

// The time of one computation of `gf` in ms, averaged over 20 after a
// first one that warms the caches.
static double time_graph_ms(ggml_backend_t be, ggml_cgraph * gf) {
    ggml_backend_graph_compute(be, gf);
    const int reps = 20;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) ggml_backend_graph_compute(be, gf);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
}

// A hash (FNV-1a) of an output's bytes: two builds of a kernel give the
// same results when their hashes agree.
static unsigned long long bytes_hash(const std::vector<uint8_t> & bytes) {
    unsigned long long h = 1469598103934665603ull;
    for (uint8_t c : bytes) h = (h ^ c) * 1099511628211ull;
    return h;
}

static unsigned long long tensor_hash(const ggml_tensor * t) {
    std::vector<uint8_t> bytes(ggml_nbytes(t));
    ggml_backend_tensor_get(t, bytes.data(), 0, bytes.size());
    return bytes_hash(bytes);
}
