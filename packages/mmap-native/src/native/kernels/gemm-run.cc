#include "gemm-run.h"

#include <algorithm>

#include "gemm-arm64.h"
#include "gemm-portable.h"
#include "gemm-x86.h"
#include "thread-pool.h"

namespace mmap_native {

namespace {

struct Kernel {
  GemmRangeFn run;
  size_t tile_rows;  // row ranges of a split start at multiples of it
};

Kernel KernelFor(const GemmProblem& p, GemmIsa isa) {
#if MMAP_NATIVE_GEMM_X86
  if (p.kr == 1 && p.sr == 1) {
    switch (isa) {
      case GemmIsa::kAvx512f:
        return {GemmAvx512f, kAvx512fTileRows};
      case GemmIsa::kAvx2Fma:
        return {GemmAvx2Fma, kAvx2FmaTileRows};
      case GemmIsa::kSse2:
        return {GemmSse2, kSse2TileRows};
      default:
        break;
    }
  }
#elif MMAP_NATIVE_GEMM_ARM64
  if (p.kr == 1 && p.sr == 1 && isa == GemmIsa::kNeon) return {GemmNeon, kNeonTileRows};
#else
  (void)isa;
#endif
  return {GemmPortable, 4};
}

// The work cut into parts: column ranges of whole blocks × row ranges of whole tiles.
struct Split {
  const GemmProblem* problem;
  Kernel kernel;
  size_t column_parts;
  size_t row_parts;
  size_t row_tiles;
};

void RunPart(void* context, size_t index) {
  const Split& s = *static_cast<const Split*>(context);
  const GemmProblem& p = *s.problem;
  const size_t column = index % s.column_parts;
  const size_t row = index / s.column_parts;
  const size_t block_begin = column * p.blocks / s.column_parts;
  const size_t block_end = (column + 1) * p.blocks / s.column_parts;
  const size_t row_begin = row * s.row_tiles / s.row_parts * s.kernel.tile_rows;
  const size_t row_end =
      std::min(p.batch, (row + 1) * s.row_tiles / s.row_parts * s.kernel.tile_rows);
  if (block_begin < block_end && row_begin < row_end) {
    s.kernel.run(p, block_begin, block_end, row_begin, row_end);
  }
}

}  // namespace

size_t GemmThreadsFor(const GemmProblem& p, size_t threads) {
  if (threads <= 1) return 1;
  // In double: the product of sizes the caller checked can still pass 2^64.
  const double work = static_cast<double>(p.batch) * static_cast<double>(p.blocks * p.nr) *
                      static_cast<double>(p.kc);
  const double worth = work / static_cast<double>(kMinMultiplyAddsPerThread);
  return worth >= static_cast<double>(threads) ? threads
                                                : std::max<size_t>(1, static_cast<size_t>(worth));
}

void RunGemm(const GemmProblem& p, GemmIsa isa, size_t threads, ThreadPool* pool) {
  const Kernel kernel = KernelFor(p, isa);
  threads = GemmThreadsFor(p, threads);
  if (threads == 1 || pool == nullptr) {
    kernel.run(p, 0, p.blocks, 0, p.batch);
    return;
  }
  // One part per thread, rows first. A part is then one long range of blocks, which the
  // kernel prefetches block after block (a part of one block would wait on DRAM for its
  // weights); both threads read every block, one fetch into the shared L3 serving both;
  // and a thread's rows of the output are its rows of the next layer's input, in its own
  // cache, since the caller takes part 0 first and a helper part 1. Finer parts measured
  // slower at 1024 × 128² and 512², batch 64: each cost a block's prefetch. Columns when
  // there are fewer row tiles than threads.
  const size_t row_tiles = (p.batch + kernel.tile_rows - 1) / kernel.tile_rows;
  const size_t row_parts = std::min(row_tiles, threads);
  const size_t column_parts = std::min(p.blocks, (threads + row_parts - 1) / row_parts);
  Split split{&p, kernel, column_parts, row_parts, row_tiles};
  pool->Run(threads - 1, column_parts * row_parts, RunPart, &split);
}

}  // namespace mmap_native
