// Scanner throughput over a generated training log (default 128 MiB; set
// GPUDIAG_BENCH_MB to change it). Run: make bench. With GPUDIAG_BENCH_LOG=FILE,
// BM_DiagnoseGivenLog and BM_MatcherAloneGivenLog read that log too (e.g. the
// inputs bench/compare.py writes), to see how far a diagnosis of it is from
// the matcher's own speed.
#include <benchmark/benchmark.h>
#include <hs.h>

#include <algorithm>
#include <cstdlib>
#include <vector>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "compress.hpp"
#include "gpudiag/gpudiag.hpp"
#include "rule_set_impl.hpp"
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

// Hyperscan alone over every byte, with the shipped rules' stream database,
// in the scan's line-aligned 1 MiB pieces, each match only counted: what a
// scan of every byte costs. A diagnosis scans only the lines whose layout it
// has not seen (README, Scanning): on logs whose lines repeat a few layouts
// it reads faster than this.
void matcher_alone(benchmark::State& state, const std::string& log) {
  const auto& impl = rules()->impl();
  std::vector<std::string_view> pieces;
  for (std::size_t pos = 0; pos < log.size();) {
    std::size_t end = std::min(log.size(), pos + (std::size_t{1} << 20));
    if (end < log.size())
      if (std::size_t nl = log.rfind('\n', end - 1); nl != std::string::npos && nl >= pos) end = nl + 1;
    pieces.push_back(std::string_view(log).substr(pos, end - pos));
    pos = end;
  }
  hs_scratch_t* scratch = nullptr;
  if (hs_alloc_scratch(impl.db.get(), &scratch) != HS_SUCCESS) throw std::runtime_error("hs_alloc_scratch");
  auto count = [](unsigned, unsigned long long, unsigned long long, unsigned, void* n) -> int {
    ++*static_cast<std::uint64_t*>(n);
    return 0;
  };
  std::uint64_t matches = 0;
  for (auto _ : state) {
    hs_stream_t* stream = nullptr;
    if (hs_open_stream(impl.db.get(), 0, &stream) != HS_SUCCESS) throw std::runtime_error("hs_open_stream");
    for (std::string_view piece : pieces)
      hs_scan_stream(stream, piece.data(), static_cast<unsigned>(piece.size()), 0, scratch, count, &matches);
    hs_close_stream(stream, scratch, count, &matches);
  }
  hs_free_scratch(scratch);
  state.counters["matches/iteration"] = static_cast<double>(matches) / static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
}

void BM_MatcherAlone(benchmark::State& state) { matcher_alone(state, the_log()); }
BENCHMARK(BM_MatcherAlone)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_MatcherAloneNoProgress(benchmark::State& state) {
  static const std::string log = gpudiag::bench::synthetic_nccl_log(log_bytes() / 2);
  matcher_alone(state, log);
}
BENCHMARK(BM_MatcherAloneNoProgress)->Unit(benchmark::kMillisecond)->MinTime(2.0);

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

// The log GPUDIAG_BENCH_LOG names, read into memory once.
const std::string& given_log() {
  static const std::string log = [] {
    std::ifstream in(std::getenv("GPUDIAG_BENCH_LOG"), std::ios::binary);
    if (!in) throw std::runtime_error("GPUDIAG_BENCH_LOG cannot be read");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  return log;
}

void BM_DiagnoseGivenLog(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(gpudiag::diagnose_bytes(rules(), given_log()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * given_log().size()));
}

void BM_MatcherAloneGivenLog(benchmark::State& state) { matcher_alone(state, given_log()); }

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("GPUDIAG_BENCH_LOG")) {
    benchmark::RegisterBenchmark("BM_DiagnoseGivenLog", BM_DiagnoseGivenLog)->Unit(benchmark::kMillisecond)->MinTime(2.0);
    benchmark::RegisterBenchmark("BM_MatcherAloneGivenLog", BM_MatcherAloneGivenLog)->Unit(benchmark::kMillisecond)->MinTime(2.0);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
