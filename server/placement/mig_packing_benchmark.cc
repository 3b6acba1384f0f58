// What choosing a MIG slice costs against the number of MIG GPUs it looks at
// (mig_packing.h ChooseSlice), and the first-fit baseline beside it.
//
//   deploy/local/build.sh mig_packing_benchmark
//   build/bin/mig_packing_benchmark
//
// The GPUs are H100 80GB (three in four) and H200, partly filled from a fixed
// seed so runs compare: a quarter empty, the rest with 1 to 6 random slices
// placed by first fit.
#include <map>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "server/core/mig_profiles.h"
#include "server/placement/mig_packing.h"

namespace wsched::placement {
namespace {

const std::vector<core::MigProfile>& H100() {
  return *core::KnownMigProfiles("NVIDIA H100 80GB HBM3");
}
const std::vector<core::MigProfile>& H200() { return *core::KnownMigProfiles("NVIDIA H200"); }

std::vector<GpuSlots> BuildGpus(int count) {
  std::mt19937 rng(7);
  std::vector<GpuSlots> gpus;
  gpus.reserve(count);
  for (int i = 0; i < count; ++i) {
    GpuSlots gpu;
    gpu.gpu = i;
    gpu.profiles = i % 4 == 3 ? &H200() : &H100();
    if (std::uniform_int_distribution<int>(0, 3)(rng) != 0) {
      const int slices = std::uniform_int_distribution<int>(1, 6)(rng);
      for (int s = 0; s < slices; ++s) {
        const auto& table = *gpu.profiles;
        const core::MigProfile& profile =
            table[std::uniform_int_distribution<size_t>(0, table.size() - 1)(rng)];
        if (std::optional<int> start = FirstFitStart(profile, gpu.used)) {
          gpu.used |= Footprint(profile, *start);
        }
      }
    }
    gpus.push_back(gpu);
  }
  return gpus;
}

// Built once per size and shared by the benchmarks.
const std::vector<GpuSlots>& GpusOf(int count) {
  static auto* cache = new std::map<int, std::vector<GpuSlots>>();
  auto [it, inserted] = cache->try_emplace(count);
  if (inserted) it->second = BuildGpus(count);
  return it->second;
}

// range(0): GPUs; range(1): which H100 profile is wanted (0 = 1g.10gb, ...).
void BM_ChooseSlice(benchmark::State& state) {
  const std::vector<GpuSlots>& gpus = GpusOf(static_cast<int>(state.range(0)));
  const core::MigProfile& want = H100()[static_cast<size_t>(state.range(1))];
  for (auto _ : state) benchmark::DoNotOptimize(ChooseSlice(gpus, want));
  state.SetLabel(want.name);
}

// The baseline: the first GPU with a free legal start.
void BM_FirstFit(benchmark::State& state) {
  const std::vector<GpuSlots>& gpus = GpusOf(static_cast<int>(state.range(0)));
  const core::MigProfile& want = H100()[static_cast<size_t>(state.range(1))];
  for (auto _ : state) {
    std::optional<int> found;
    for (const GpuSlots& gpu : gpus) {
      const core::MigProfile* profile = core::FindProfile(*gpu.profiles, want.name);
      if (profile == nullptr) continue;
      found = FirstFitStart(*profile, gpu.used);
      if (found) break;
    }
    benchmark::DoNotOptimize(found);
  }
  state.SetLabel(want.name);
}

// One GPU's start, for the per-GPU share of the above.
void BM_BestStart(benchmark::State& state) {
  const core::MigProfile& want = H100()[static_cast<size_t>(state.range(1))];
  for (auto _ : state) benchmark::DoNotOptimize(BestStart(want, 0x01, H100()));
  state.SetLabel(want.name);
}

// 1g.10gb, 2g.20gb, 3g.40gb and 7g.80gb (the last fits only the empty GPUs).
void Sizes(benchmark::internal::Benchmark* b) {
  for (int gpus : {1000, 10000}) {
    for (int profile : {0, 3, 4, 6}) b->Args({gpus, profile});
  }
}

BENCHMARK(BM_ChooseSlice)->Apply(Sizes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FirstFit)->Apply(Sizes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BestStart)->Args({1, 0})->Args({1, 4});

}  // namespace
}  // namespace wsched::placement

BENCHMARK_MAIN();
