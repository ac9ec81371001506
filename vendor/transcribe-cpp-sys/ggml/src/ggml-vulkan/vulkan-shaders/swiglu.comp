#version 450

#include "glu_head.glsl"

float op(float a, float b) {
    return a / (1.0f + exp(-a)) * b;
}

#include "glu_main.glsl"
