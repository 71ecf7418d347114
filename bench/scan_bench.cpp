// Scanner throughput over a generated training log (default 128 MiB; set
// GPUDIAG_BENCH_MB to change it). Run: make bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <vector>
#include <fstream>
#include <stdexcept>

#include "compress.hpp"
#include "gpudiag/gpudiag.hpp"
#include "synthetic_log.hpp"

namespace {

std::size_t log_bytes() {
  const char* mb = std::getenv("GPUDIAG_BENCH_MB");
  return (mb ? std::strtoull(mb, nullptr, 10) : 128) << 20;
}

const std::string& the_log() {
  static const std::string log = gpudiag::bench::synthetic_training_log(log_bytes());
  return log;
}

std::shared_ptr<const gpudiag::RuleSet> rules() {
  static auto set = gpudiag::RuleSet::builtin(gpudiag::CacheOptions{false, {}});
  return set;
}

// Diagnoses `log` in memory while the benchmark runs, checking its class.
void diagnose_in_memory(benchmark::State& state, const std::string& log, const std::string& expected) {
  for (auto _ : state) {
    gpudiag::Diagnosis d = gpudiag::diagnose_bytes(rules(), log);
    if (d.cls != expected) throw std::runtime_error("benchmark log misdiagnosed: " + d.cls);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
}

void BM_DiagnoseInMemory(benchmark::State& state) { diagnose_in_memory(state, the_log(), "cuda_oom"); }
BENCHMARK(BM_DiagnoseInMemory)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_DiagnoseFile(benchmark::State& state) {
  const std::string path = "gpudiag_bench.log";
  {
    std::ofstream out(path, std::ios::binary);
    out << the_log();
  }
  for (auto _ : state) {
    gpudiag::Diagnosis d = gpudiag::diagnose_file(rules(), path);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * the_log().size()));
  std::remove(path.c_str());
}
BENCHMARK(BM_DiagnoseFile)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// A compressed copy of the first 32 MiB, read back: the decoder's cost on
// top of the scan. Throughput counts the text, as for the plain log.
void BM_DiagnoseCompressed(benchmark::State& state) {
  using Compress = std::string (*)(const std::string&);
  constexpr Compress kFormats[] = {nullptr, gpudiag::testing::gzip, gpudiag::testing::zstd,
                                   gpudiag::testing::bzip2, gpudiag::testing::xz};
  constexpr const char* kNames[] = {"plain", "gzip", "zstd", "bzip2", "xz"};
  const std::string text = the_log().substr(0, std::min<std::size_t>(the_log().size(), 32 << 20));
  const auto compress = kFormats[state.range(0)];
  const std::string stored = compress ? compress(text) : text;
  state.SetLabel(kNames[state.range(0)]);
  for (auto _ : state) {
    gpudiag::Diagnosis d = gpudiag::diagnose_bytes(rules(), stored);
    if (d.bytes != text.size() || !d.input.damage.empty())
      throw std::runtime_error("benchmark archive misread: " + std::to_string(d.bytes) + " of " +
                               std::to_string(text.size()) + " bytes, " + d.input.damage);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_DiagnoseCompressed)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// No line mentions the loss: the scan without the progress path.
void BM_DiagnoseNoProgress(benchmark::State& state) {
  static const std::string log = gpudiag::bench::synthetic_nccl_log(log_bytes() / 2);
  diagnose_in_memory(state, log, "nccl_timeout");
}
BENCHMARK(BM_DiagnoseNoProgress)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// One 64 MiB line without a newline (a binary blob, a runaway print): read
// in chunk-sized pieces.
void BM_DiagnoseOneLongLine(benchmark::State& state) {
  static const std::string log = [] {
    std::string s = the_log().substr(0, 64 << 20);
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
  }();
  for (auto _ : state) benchmark::DoNotOptimize(gpudiag::diagnose_bytes(rules(), log));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
}
BENCHMARK(BM_DiagnoseOneLongLine)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Many small logs (1 to 20 KiB, cut from the generated log at line ends) in
// one process: the per-call cost. Items are logs.
void BM_DiagnoseManySmallLogs(benchmark::State& state) {
  static const std::vector<std::string> logs = [] {
    std::vector<std::string> out;
    const std::string& log = the_log();
    std::size_t at = 0;
    for (std::size_t i = 0; i < 2000; ++i) {
      const std::size_t want = 1024 + (i * 7919) % (19 * 1024);
      const std::size_t end = log.find('\n', at + want);
      if (end == std::string::npos) break;
      out.push_back(log.substr(at, end + 1 - at));
      at = end + 1;
    }
    return out;
  }();
  std::size_t bytes = 0;
  for (const auto& l : logs) bytes += l.size();
  for (auto _ : state)
    for (const auto& l : logs) benchmark::DoNotOptimize(gpudiag::diagnose_bytes(rules(), l));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * logs.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_DiagnoseManySmallLogs)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The shipped rules, their databases compiled into the library.
void BM_LoadShippedRules(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(gpudiag::RuleSet::builtin());
}
BENCHMARK(BM_LoadShippedRules)->Unit(benchmark::kMicrosecond);

// The same rules read from their directory, as any other rules are: the
// database from the on-disk cache.
void BM_LoadRulesFromCache(benchmark::State& state) {
  gpudiag::RuleSet::load_dir(GPUDIAG_RULES_DIR);  // make sure the cache holds them
  for (auto _ : state) benchmark::DoNotOptimize(gpudiag::RuleSet::load_dir(GPUDIAG_RULES_DIR));
}
BENCHMARK(BM_LoadRulesFromCache)->Unit(benchmark::kMicrosecond);

// A cold start where the library's databases cannot be used.
void BM_CompileRules(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(gpudiag::RuleSet::load_dir(GPUDIAG_RULES_DIR, gpudiag::CacheOptions{false, {}}));
}
BENCHMARK(BM_CompileRules)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
