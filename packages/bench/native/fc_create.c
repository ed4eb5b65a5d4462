// Native reference of the bench's `native` section: creates `layers` fully-connected
// operators of dim x dim with XNNPACK's xnn_create_fully_connected_nc_f32, which packs the
// weights in C on every create (the 2022 library in Debian has no weights cache).
// Prints one JSON line: {"roundsMs":[...]}.
// Compiled at run time by src/native.ts: cc -O2 fc_create.c -o fc_create -lXNNPACK
// Usage: fc_create <layers> <dim> <rounds>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <xnnpack.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void fill(float *out, size_t n, uint32_t seed) {
  uint32_t s = seed ? seed : 1;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    out[i] = (float)(s / 4294967296.0 - 0.5);
  }
}

int main(int argc, char **argv) {
  if (argc < 4) return 2;
  size_t layers = strtoul(argv[1], NULL, 10), dim = strtoul(argv[2], NULL, 10);
  int rounds = atoi(argv[3]);
  if (xnn_initialize(NULL) != xnn_status_success) {
    printf("{\"error\":\"xnn_initialize failed\"}\n");
    return 1;
  }
  float **w = malloc(layers * sizeof *w), **b = malloc(layers * sizeof *b);
  xnn_operator_t *ops = calloc(layers, sizeof *ops);
  for (size_t l = 0; l < layers; l++) {
    w[l] = malloc(dim * dim * sizeof(float));
    b[l] = malloc(dim * sizeof(float));
    fill(w[l], dim * dim, (uint32_t)l + 1);
    fill(b[l], dim, 100000u + (uint32_t)l);
  }
  printf("{\"roundsMs\":[");
  for (int r = 0; r < rounds; r++) {
    double start = now_ms();
    for (size_t l = 0; l < layers; l++) {
      enum xnn_status status = xnn_create_fully_connected_nc_f32(
          dim, dim, dim, dim, w[l], b[l], -INFINITY, INFINITY, 0, &ops[l]);
      if (status != xnn_status_success) {
        printf("]}\n{\"error\":\"xnn_create_fully_connected_nc_f32 returned %d\"}\n", (int)status);
        return 1;
      }
    }
    double elapsed = now_ms() - start;
    for (size_t l = 0; l < layers; l++) xnn_delete_operator(ops[l]);
    printf("%s%.3f", r ? "," : "", elapsed);
  }
  printf("]}\n");
  return 0;
}
