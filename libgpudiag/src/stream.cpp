#include <cstring>

#include "container_reader.hpp"
#include "counter_reader.hpp"
#include "decompressor.hpp"
#include "evidence_collector.hpp"
#include "exit_status_reader.hpp"
#include "gpudiag/diagnose.hpp"
#include "launcher_report_reader.hpp"
#include "line_scanner.hpp"
#include "resolver.hpp"
#include "traceback_reader.hpp"
#include "trajectory_builder.hpp"
#include "utf16_reader.hpp"

namespace gpudiag {
namespace {

// The longest container record read as one: Docker splits lines at 16 KiB,
// which JSON escaping can make several times longer.
constexpr std::size_t kMaxRecord = 256 << 10;

const char* last_newline(std::string_view s) {
  return static_cast<const char*>(::memrchr(s.data(), '\n', s.size()));
}

}  // namespace

// Cuts whatever it is given into line-aligned pieces of at most chunk_size
// bytes. Whole lines are scanned where they lie (no copy); only the unfinished
// last line of a write is carried over, and a line that outgrows a chunk is
// scanned in chunk-sized pieces, so memory stays bounded.
struct Stream::Impl {
  std::shared_ptr<const RuleSet> rules;
  DiagnoseOptions options;
  // A hit goes to the one reader of its rule's role (launcher reports, exit
  // statuses, checkpoint counters, the trajectory, tracebacks), then to the
  // collector; the trajectory builder drops progress hits whose line holds
  // no reading, and the collector asks the traceback and trajectory readers
  // about the exception a cause line closes.
  detail::TracebackReader tracebacks;
  detail::EvidenceCollector collector;
  detail::TrajectoryBuilder trajectory;
  detail::CounterReader counters;
  detail::ExitStatusReader exits;
  detail::LauncherReportReader launcher;
  // Routed here by role rather than passed down a chain of the readers, in
  // which a progress line's hit went through six virtual calls, each looking
  // its role up again (no role has two readers: a test says so).
  struct Router final : detail::MatchSink {
    Impl& to;
    explicit Router(Impl& impl) : to(impl) {}
    void on_hit(const detail::LineHit& hit) override {
      const Role role = to.rules->impl().rules[hit.rule].role;
      if (detail::LauncherReportReader::reads(role)) to.launcher.on_hit(hit);
      else if (detail::ExitStatusReader::reads(role)) to.exits.on_hit(hit);
      else if (detail::CounterReader::reads(role)) to.counters.on_hit(hit);
      else if (detail::TrajectoryBuilder::reads(role) && !to.trajectory.take(hit)) return;
      else if (detail::TracebackReader::reads(role)) to.tracebacks.on_hit(hit);
      to.collector.on_hit(hit);
    }
  } router{*this};
  detail::LineScanner scanner;
  // In front of the scanner: stored bytes -> text -> UTF-8 -> the lines a
  // container runtime's records hold -> line-aligned pieces.
  detail::ContainerReader container;
  detail::Utf16Reader utf16;
  detail::Decompressor decompressor;
  std::string carry;
  bool finished = false;
  std::uint64_t stored = 0;  // bytes of the input written, as stored
  bool full = false;         // the size limit was reached

  Impl(std::shared_ptr<const RuleSet> r, DiagnoseOptions o)
      : rules(std::move(r)),
        options(o),
        tracebacks(rules->impl()),
        collector(rules->impl(), &tracebacks, &trajectory),
        trajectory(rules->impl()),
        counters(rules->impl()),
        exits(rules->impl()),
        launcher(rules->impl()),
        scanner(rules->impl(), router, options.text_cap),
        container([this](std::string_view text) { cut(text); }, std::max<std::size_t>(o.chunk_size, kMaxRecord)),
        utf16([this](std::string_view text) { container.write(text); }),
        decompressor([this](std::string_view text) { utf16.write(text); }) {
    if (options.chunk_size < 64) options.chunk_size = 64;
    if (!options.exit_code && options.scheduler) options.exit_code = options.scheduler->exit_status();
    carry.reserve(options.chunk_size);
  }

  // The collector and the trajectory keep views of the piece's lines until
  // it is scanned.
  void scan(std::string_view piece) {
    scanner.scan(piece);
    collector.keep_texts();
    trajectory.keep_texts();
  }

  void flush_carry() {
    scan(carry);
    carry.clear();
  }

  void write(std::string_view data) {
    if (full) return;
    if (options.max_bytes && data.size() >= options.max_bytes - stored) {
      data = data.substr(0, options.max_bytes - stored);
      full = true;
    }
    stored += data.size();
    decompressor.write(data);
  }

  void cut(std::string_view data) {
    const std::size_t chunk = options.chunk_size;
    while (!data.empty()) {
      if (!carry.empty()) {
        const void* nl = std::memchr(data.data(), '\n', data.size());
        std::size_t want = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data.data()) + 1
                              : data.size();
        std::size_t take = std::min(want, chunk - carry.size());
        carry.append(data.substr(0, take));
        data.remove_prefix(take);
        if ((nl && take == want) || carry.size() == chunk) flush_carry();
        continue;
      }
      std::string_view window = data.substr(0, chunk);
      const char* nl = last_newline(window);
      if (nl) {
        std::size_t n = static_cast<std::size_t>(nl - data.data()) + 1;
        scan(data.substr(0, n));
        data.remove_prefix(n);
      } else if (window.size() == chunk) {
        scan(window);  // a piece of a line longer than a chunk
        data.remove_prefix(chunk);
      } else {
        carry.assign(data);
        data = {};
      }
    }
  }

  Diagnosis finish() {
    if (finished) throw std::logic_error("Stream::finish() called twice");
    finished = true;
    decompressor.finish();
    utf16.finish();
    container.finish();
    if (options.scheduler) {
      // The scheduler's record is the last word on the job, after the log's.
      if (!carry.empty()) cut("\n");
      cut(options.scheduler->render());
    }
    if (!carry.empty()) scan(carry);
    scanner.finish();  // carry stays alive: end-of-data matches may point into it
    collector.keep_texts();
    trajectory.keep_texts();
    carry.clear();
    detail::ScanResult result{collector.per_rule(), collector.logged(), exits.reports(), trajectory.finish(), launcher.finish(),
                              counters.reset(), trajectory.step_time_change(), trajectory.epoch_bars(), trajectory.last_count(),
                              options.exit_code, scanner.bytes(), scanner.lines()};
    Diagnosis d = detail::resolve(rules->impl(), result);
    d.input = InputFormat{std::string(decompressor.format()), std::string(container.format()),
                          std::string(utf16.format()), decompressor.damage(), decompressor.damage_at()};
    if (full && d.input.damage.empty()) {
      d.input.damage = "stopped at the size limit of " + std::to_string(options.max_bytes) + " bytes";
      d.input.damage_at = options.max_bytes;
    }
    return d;
  }
};

Stream::Stream(std::shared_ptr<const RuleSet> rules, DiagnoseOptions options)
    : impl_(std::make_unique<Impl>(std::move(rules), options)) {}
Stream::~Stream() = default;

void Stream::write(std::string_view bytes) {
  if (impl_->finished) throw std::logic_error("Stream::write() after finish()");
  impl_->write(bytes);
}

bool Stream::full() const { return impl_->full; }

void Stream::set_exit_code(std::optional<int> exit_code) {
  if (impl_->finished) throw std::logic_error("Stream::set_exit_code() after finish()");
  impl_->options.exit_code = exit_code;
}

Diagnosis Stream::finish() { return impl_->finish(); }

Diagnosis diagnose_bytes(std::shared_ptr<const RuleSet> rules, std::string_view log,
                         const DiagnoseOptions& options) {
  Stream stream(std::move(rules), options);
  stream.write(log);
  return stream.finish();
}

}  // namespace gpudiag
