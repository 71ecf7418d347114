// The thin native layer under the gpudiag Python package: it binds the C++
// result types as they are (read-only), loads rules, and scans with the GIL
// released. The Pythonic API lives in the pure-Python package around it;
// neither re-lists the fields of the JSON writer, which stays the one
// serializer (Diagnosis.to_json).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "gpudiag/gpudiag.hpp"

namespace py = pybind11;
using namespace gpudiag;

namespace {

// Holds a read-only view of any object exporting a contiguous buffer (bytes,
// bytearray, memoryview, mmap, numpy uint8 arrays) without copying it.
class BufferView {
 public:
  explicit BufferView(py::handle obj) {
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  }
  ~BufferView() { PyBuffer_Release(&view_); }
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;
  std::string_view bytes() const {
    return {static_cast<const char*>(view_.buf), static_cast<std::size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

// Empty strings are None in Python, as null in JSON.
template <class T>
auto optional_string(std::string T::*member) {
  return [member](const T& self) -> std::optional<std::string> {
    const std::string& s = self.*member;
    return s.empty() ? std::nullopt : std::optional<std::string>(s);
  };
}

// A series as a tuple of (step, value) pairs.
template <class R>
py::tuple series_tuple(const std::vector<R>& series, double R::*value) {
  py::list out;
  for (const auto& r : series) out.append(py::make_tuple(r.step, r.*value));
  return py::tuple(out);
}

DiagnoseOptions make_options(std::optional<int> exit_code, std::size_t chunk_size, std::size_t text_cap,
                             const std::optional<std::filesystem::path>& scheduler, std::uint64_t max_bytes = 0) {
  DiagnoseOptions o;
  o.max_bytes = max_bytes;
  o.exit_code = exit_code;
  if (scheduler) o.scheduler = read_scheduler_record(*scheduler);
  o.chunk_size = chunk_size;
  o.text_cap = text_cap;
  return o;
}

void bind_results(py::module_& m) {
  py::class_<Evidence>(m, "Evidence", "One log line a rule matched.")
      .def_readonly("rule", &Evidence::rule)
      .def_readonly("class_", &Evidence::cls)
      .def_readonly("line", &Evidence::line)
      .def_readonly("offset", &Evidence::offset)
      .def_readonly("text", &Evidence::text)
      .def_readonly("truncated", &Evidence::truncated)
      .def_readonly("count", &Evidence::count)
      .def_readonly("values", &Evidence::values)
      .def_readonly("rank", &Evidence::rank)
      .def_property_readonly("host", optional_string(&Evidence::host))
      .def_property_readonly("severity", optional_string(&Evidence::severity));
  py::class_<Finding>(m, "Finding", "Something worth knowing beside the primary class.")
      .def_readonly("kind", &Finding::kind)
      .def_property_readonly("class_", optional_string(&Finding::cls))
      .def_property_readonly("rule", optional_string(&Finding::rule))
      .def_readonly("line", &Finding::line)
      .def_readonly("rank", &Finding::rank)
      .def_readonly("reason", &Finding::reason)
      .def_readonly("message", &Finding::message)
      .def_readonly("evidence", &Finding::evidence);
  py::class_<LossReading>(m, "LossReading", "One loss value read from a progress line.")
      .def_readonly("step", &LossReading::step)
      .def_readonly("loss", &LossReading::loss)
      .def_readonly("line", &LossReading::line)
      .def_readonly("step_reported", &LossReading::step_reported);
  py::class_<Reading>(m, "Reading", "One value of a quantity beside the training loss.")
      .def_readonly("step", &Reading::step)
      .def_readonly("value", &Reading::value)
      .def_readonly("line", &Reading::line)
      .def_readonly("step_reported", &Reading::step_reported);
  py::class_<Series>(m, "Series", "A quantity over the run: its exact extremes and a bounded series.")
      .def_readonly("readings", &Series::readings)
      .def_readonly("first", &Series::first)
      .def_readonly("last", &Series::last)
      .def_readonly("lowest", &Series::lowest)
      .def_readonly("peak", &Series::peak)
      .def_property_readonly("series", [](const Series& s) { return series_tuple(s.series, &Reading::value); });
  py::class_<Trajectory>(m, "Trajectory", "The training loss of one rank.")
      .def_property_readonly("shape", [](const Trajectory& t) { return std::string(to_string(t.shape)); })
      .def_readonly("readings", &Trajectory::readings)
      .def_readonly("rank", &Trajectory::rank)
      .def_readonly("max_step", &Trajectory::max_step)
      .def_readonly("first_epoch", &Trajectory::first_epoch)
      .def_readonly("first", &Trajectory::first)
      .def_readonly("last", &Trajectory::last)
      .def_readonly("lowest", &Trajectory::lowest)
      .def_readonly("peak", &Trajectory::peak)
      .def_readonly("first_non_finite", &Trajectory::first_non_finite)
      .def_property_readonly("series", [](const Trajectory& t) { return series_tuple(t.series, &LossReading::loss); })
      .def_readonly("evaluation", &Trajectory::evaluation)
      .def_readonly("grad_norm", &Trajectory::grad_norm)
      .def_readonly("learning_rate", &Trajectory::learning_rate)
      .def_readonly("loss_scale", &Trajectory::loss_scale)
      .def_readonly("step_time", &Trajectory::step_time)
      .def_readonly("throughput", &Trajectory::throughput);
  py::class_<FailedWorker>(m, "FailedWorker", "One failed worker of a launcher's summary.")
      .def_readonly("rank", &FailedWorker::rank)
      .def_readonly("local_rank", &FailedWorker::local_rank)
      .def_property_readonly("host", optional_string(&FailedWorker::host))
      .def_property_readonly("time", optional_string(&FailedWorker::time))
      .def_readonly("exit_code", &FailedWorker::exit_code)
      .def_readonly("signal", &FailedWorker::signal)
      .def_property_readonly("signal_name", optional_string(&FailedWorker::signal_name))
      .def_readonly("line", &FailedWorker::line);
  py::class_<LauncherReport>(m, "LauncherReport", "A launcher's failure summary.")
      .def_readonly("root_cause", &LauncherReport::root_cause)
      .def_property_readonly("other_failures",
                             [](const LauncherReport& r) { return py::tuple(py::cast(r.other_failures)); })
      .def_readonly("other_failure_count", &LauncherReport::other_failure_count);
  py::class_<Verdict>(m, "Verdict", "What the log shows, implies and cannot decide.")
      .def_property_readonly("shows", [](const Verdict& v) { return py::tuple(py::cast(v.shows)); })
      .def_property_readonly("implies", [](const Verdict& v) { return py::tuple(py::cast(v.implies)); })
      .def_property_readonly("cannot_decide",
                             [](const Verdict& v) { return py::tuple(py::cast(v.cannot_decide)); });
  py::class_<InputFormat>(m, "InputFormat", "How the input was stored, and whether all of it was read.")
      .def_property_readonly("compression", optional_string(&InputFormat::compression))
      .def_property_readonly("container", optional_string(&InputFormat::container))
      .def_property_readonly("encoding", optional_string(&InputFormat::encoding))
      .def_property_readonly("damage", optional_string(&InputFormat::damage))
      .def_property_readonly("damage_at", [](const InputFormat& f) {
        return f.damage.empty() ? std::optional<std::uint64_t>() : f.damage_at;
      });
  py::class_<Diagnosis>(m, "Diagnosis", "Why a job ended, with the evidence.")
      .def_property_readonly("path", optional_string(&Diagnosis::path))
      .def_readonly("class_", &Diagnosis::cls)
      .def_readonly("title", &Diagnosis::title)
      .def_readonly("g15", &Diagnosis::g15)
      .def_readonly("family", &Diagnosis::family)
      .def_readonly("owner", &Diagnosis::owner)
      .def_readonly("confidence", &Diagnosis::confidence)
      .def_readonly("verdict", &Diagnosis::verdict)
      .def_property_readonly("evidence", [](const Diagnosis& d) { return py::tuple(py::cast(d.evidence)); })
      .def_property_readonly("findings", [](const Diagnosis& d) { return py::tuple(py::cast(d.findings)); })
      .def_readonly("trajectory", &Diagnosis::trajectory)
      .def_readonly("launcher", &Diagnosis::launcher)
      .def_readonly("exit_code", &Diagnosis::exit_code)
      .def_readonly("bytes", &Diagnosis::bytes)
      .def_readonly("lines", &Diagnosis::lines)
      .def_readonly("input", &Diagnosis::input)
      .def("to_json", [](const Diagnosis& d, int indent) { return to_json(d, {}, indent); },
           py::arg("indent") = 0, py::call_guard<py::gil_scoped_release>(),
           "The command line's JSON object of this diagnosis.")
      .def("to_text", [](const Diagnosis& d, bool color) { return to_text(d, {}, TextStyle{color}); },
           py::arg("color") = false, "The command line's text rendering.")
      .def("to_brief", [](const Diagnosis& d, bool color) { return to_brief(d, {}, TextStyle{color}); },
           py::arg("color") = false, "The command line's one-line (--format brief) rendering.")
      // A pickle is the JSON object: the one schema, read back by from_json.
      .def(py::pickle([](const Diagnosis& d) { return py::make_tuple(to_json(d)); },
                      [](const py::tuple& state) {
                        if (state.size() != 1) throw std::invalid_argument("not a pickled Diagnosis");
                        return from_json(state[0].cast<std::string>());
                      }));
  m.def("diagnosis_from_json", [](const std::string& json) { return from_json(json); }, py::arg("json"),
        py::call_guard<py::gil_scoped_release>(), "The Diagnosis a JSON object of the output schema describes.");
}

void bind_rules(py::module_& m) {
  py::class_<ClassInfo>(m, "ClassInfo", "One class of the taxonomy: its card and behaviour.")
      .def_readonly("id", &ClassInfo::id)
      .def_readonly("family", &ClassInfo::family)
      .def_readonly("owner", &ClassInfo::owner)
      .def_readonly("g15", &ClassInfo::g15)
      .def_readonly("title", &ClassInfo::title)
      .def_readonly("description", &ClassInfo::description)
      .def_readonly("cause", &ClassInfo::cause)
      .def_readonly("action", &ClassInfo::action)
      .def_readonly("rerun", &ClassInfo::rerun)
      .def_readonly("rerun_note", &ClassInfo::rerun_note)
      .def_readonly("cannot_decide", &ClassInfo::cannot_decide)
      .def_property_readonly("exit_signals", [](const ClassInfo& c) { return py::tuple(py::cast(c.exit_signals)); })
      .def_property_readonly("exit_codes", [](const ClassInfo& c) { return py::tuple(py::cast(c.exit_codes)); })
      .def_readonly("signal_exit_cascade", &ClassInfo::signal_exit_cascade)
      .def_readonly("signal_exit_stop", &ClassInfo::signal_exit_stop)
      .def_readonly("stop", &ClassInfo::stop)
      .def_property_readonly("tier", [](const ClassInfo& c) { return std::string(to_string(c.tier)); })
      .def_readonly("survivable", &ClassInfo::survivable)
      .def_readonly("stall", &ClassInfo::stall)
      .def_readonly("resume_failure", &ClassInfo::resume_failure)
      .def_property_readonly("outcome", [](const ClassInfo& c) { return std::string(to_string(c.outcome)); })
      .def_readonly("max_steps", &ClassInfo::max_steps)
      .def_readonly("source", &ClassInfo::source);
  py::class_<Rule>(m, "Rule", "One rule, as loaded (defines expanded).")
      .def_readonly("id", &Rule::id)
      .def_property_readonly("class_", [](const Rule& r) { return r.cls.empty() ? py::object(py::none()) : py::str(r.cls); })
      .def_readonly("g15", &Rule::g15)
      .def_property_readonly("role", [](const Rule& r) { return std::string(to_string(r.role)); })
      .def_readonly("cascade", &Rule::cascade)
      .def_property_readonly("patterns", [](const Rule& r) {
        py::list out;
        for (const auto& p : r.patterns) out.append(p.regex);
        return py::tuple(out);
      })
      .def_property_readonly("flags", [](const Rule& r) {
        py::list out;
        for (const auto& p : r.patterns) out.append(py::tuple(py::cast(p.flags)));
        return py::tuple(out);
      })
      .def_property_readonly("extract", [](const Rule& r) {
        py::dict out;
        for (const auto& e : r.extract) out[py::str(e.name)] = e.regex;
        return out;
      })
      .def_readonly("description", &Rule::description)
      .def_readonly("source", &Rule::source);

  py::class_<RuleSet, std::shared_ptr<RuleSet>>(m, "NativeRuleSet")
      .def_property_readonly("origin", &RuleSet::origin)
      .def_property_readonly("digest", &RuleSet::digest)
      .def_property_readonly("cache_outcome",
                             [](const RuleSet& s) { return std::string(to_string(s.cache_outcome())); })
      .def_property_readonly("cache_file", [](const RuleSet& s) { return s.cache_file().string(); })
      .def("rules", [](const RuleSet& s) { return py::tuple(py::cast(s.rules())); })
      .def("classes", [](const RuleSet& s) { return py::tuple(py::cast(s.taxonomy().classes)); })
      .def("check_examples", [](const RuleSet& s) {
        py::list out;
        for (const auto& f : s.check_examples()) out.append(py::make_tuple(f.file, f.rule_id, f.problem));
        return out;
      });
}

// Many files on `jobs` threads of its own, started at once, while Python
// takes the results in input order, a few at a time: the threads never wait
// for Python (its GIL, its writing) unless a window of results is done and
// not yet taken, which also bounds the memory however many files there are.
// An input that could not be read is (None, its error); with `json`, each
// diagnosis comes with its JSON, serialised on the threads too.
class FileRun {
 public:
  using Task = std::tuple<std::filesystem::path, std::optional<int>, std::optional<std::filesystem::path>>;

  FileRun(std::shared_ptr<RuleSet> rules, std::vector<Task> tasks, unsigned jobs, bool json,
          std::size_t text_cap, std::uint64_t max_bytes)
      : rules_(std::move(rules)), tasks_(std::move(tasks)), json_(json), text_cap_(text_cap),
        max_bytes_(max_bytes), ring_(std::max<std::size_t>(256, 128 * std::size_t{std::max(1u, jobs)})) {
    const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, jobs), tasks_.size()));
    try {
      for (unsigned j = 0; j < threads; ++j) threads_.emplace_back([this] { work(); });
    } catch (...) {
      stop();  // the threads started, before the error propagates
      throw;
    }
  }
  ~FileRun() { stop(); }
  FileRun(const FileRun&) = delete;
  FileRun& operator=(const FileRun&) = delete;

  // The next results in order, as (diagnosis, its JSON or None), or (None,
  // the error) for an input that could not be read; see wait.
  py::list take(std::size_t count) {
    py::list out;
    for (Slot& s : wait(count, false)) {
      if (s.diagnosis)
        out.append(py::make_tuple(std::move(*s.diagnosis), json_ ? py::object(py::str(s.text)) : py::none()));
      else
        out.append(py::make_tuple(py::none(), py::str(s.text)));
    }
    return out;
  }

  // As take, for JSON Lines: the diagnoses' JSON is written to `fd` here, a
  // line each, in order, and what comes back is (class, owner, read in part)
  // for each, so that the lines never become Python objects. An input that
  // could not be read ends the batch as (None, its error), for the caller to
  // write before it takes more.
  py::list take_jsonl(std::size_t count, int fd) {
    if (!json_) throw std::invalid_argument("take_jsonl needs a FileRun made with json=True");
    std::vector<Slot> got = wait(count, true);
    std::string lines;
    py::list out;
    for (Slot& s : got) {
      if (!s.diagnosis) {
        out.append(py::make_tuple(py::none(), py::str(s.text)));
        continue;
      }
      lines += s.text;
      lines += '\n';
      out.append(py::make_tuple(s.diagnosis->cls, s.diagnosis->owner, !s.diagnosis->input.damage.empty()));
    }
    int error = 0;
    {
      py::gil_scoped_release release;
      error = write_all(fd, lines);
    }
    if (error) {
      errno = error;
      PyErr_SetFromErrno(PyExc_OSError);
      throw py::error_already_set();
    }
    return out;
  }

  // Stops the threads (those diagnosing finish their file first).
  void close() {
    py::gil_scoped_release release;
    stop();
  }

 private:
  struct Slot {
    std::optional<Diagnosis> diagnosis;
    std::string text;  // the JSON, or the error
    bool done = false;
  };

  Slot& slot(std::size_t i) { return ring_[i % ring_.size()]; }

  // The next results in order, up to `count` (at least one while any are
  // left; none when all were taken), or up to and with the first input that
  // could not be read where `to_failure`. Waits with the GIL released,
  // waking now and then for Python's signals (Ctrl-C). One caller at a time.
  std::vector<Slot> wait(std::size_t count, bool to_failure) {
    std::vector<Slot> got;
    // A batch at a time: waking for every result would take a core from the
    // threads each time.
    const std::size_t batch = std::min({std::max<std::size_t>(count, 1), ring_.size() / 2, tasks_.size() - taken_});
    while (got.empty() && taken_ < tasks_.size()) {
      {
        py::gil_scoped_release release;
        std::unique_lock lock(mutex_);
        want_ = taken_ + batch;
        done_.wait_for(lock, std::chrono::milliseconds(100), [&] { return ready_ >= want_; });
        want_ = 0;
        while (got.size() < batch && taken_ < ready_ && !(to_failure && !got.empty() && !got.back().diagnosis))
          got.push_back(std::exchange(slot(taken_++), Slot{}));
        advance_ready();
      }
      room_.notify_all();
      if (got.empty() && PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
    return got;
  }

  // Writes all of `bytes`; 0, or the errno of the write that failed.
  static int write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
  }

  // Moves ready_ past the results done since; the ring holds results
  // taken_ to taken_ + its size (past that, its slots are taken_'s again).
  void advance_ready() {
    const std::size_t end = std::min(tasks_.size(), taken_ + ring_.size());
    while (ready_ < end && slot(ready_).done) ++ready_;
  }

  void work() {
    for (;;) {
      std::size_t i;
      {
        std::unique_lock lock(mutex_);
        room_.wait(lock, [&] { return stopping_ || next_ >= tasks_.size() || next_ < taken_ + ring_.size(); });
        if (stopping_ || next_ >= tasks_.size()) return;
        i = next_++;
      }
      Slot result = diagnose(tasks_[i]);
      bool wake = false;
      {
        std::lock_guard lock(mutex_);
        slot(i) = std::move(result);
        advance_ready();
        wake = want_ != 0 && ready_ >= want_;
      }
      if (wake) done_.notify_one();
    }
  }

  Slot diagnose(const Task& task) const {
    const auto& [path, exit_code, scheduler] = task;
    Slot s;
    s.done = true;
    try {
      DiagnoseOptions o = make_options(exit_code, DiagnoseOptions{}.chunk_size, text_cap_, scheduler, max_bytes_);
      o.read_ahead = threads_.size() < 2;  // more keep the CPUs busy with files of their own
      Diagnosis d = diagnose_file(rules_, path, o);
      if (json_) s.text = to_json(d);
      s.diagnosis = std::move(d);
    } catch (const std::exception& e) {
      s.text = e.what();
    }
    return s;
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    room_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

  const std::shared_ptr<RuleSet> rules_;
  const std::vector<Task> tasks_;
  const bool json_;
  const std::size_t text_cap_;
  const std::uint64_t max_bytes_;
  std::mutex mutex_;
  std::condition_variable room_;  // a result was taken, or the run stops
  std::condition_variable done_;  // a result is done
  std::vector<Slot> ring_;        // result i in ring_[i % size], until taken
  std::size_t next_ = 0;          // the next task to start
  std::size_t taken_ = 0;         // results taken
  std::size_t ready_ = 0;         // results before it are all done
  std::size_t want_ = 0;          // what the taker waits for ready_ to reach; 0: none
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "Native core of gpudiag; use the gpudiag package, not this module.";

  py::register_exception<RuleError>(m, "RuleError", PyExc_ValueError);
  py::register_exception<InputError>(m, "InputError", PyExc_OSError);
  bind_results(m);
  bind_rules(m);

  // pybind11 holders cannot be shared_ptr<const T>; nothing bound here mutates a RuleSet.
  auto as_mutable = [](std::shared_ptr<const RuleSet> s) {
    return std::const_pointer_cast<RuleSet>(std::move(s));
  };

  m.def(
      "load_rules",
      [as_mutable](std::optional<std::filesystem::path> dir, bool cache,
                   std::optional<std::filesystem::path> cache_dir) {
        CacheOptions options;
        options.enabled = cache;
        if (cache_dir) options.dir = *cache_dir;
        std::shared_ptr<const RuleSet> set;
        {
          py::gil_scoped_release release;
          set = dir ? RuleSet::load_dir(*dir, options) : RuleSet::builtin(options);
        }
        return as_mutable(std::move(set));
      },
      py::arg("dir") = py::none(), py::arg("cache") = true, py::arg("cache_dir") = py::none());

  m.def(
      "diagnose_buffer",
      [](std::shared_ptr<RuleSet> rules, py::object buffer, std::optional<int> exit_code,
         std::size_t chunk_size, std::size_t text_cap, std::optional<std::filesystem::path> scheduler,
         std::uint64_t max_bytes) {
        BufferView view(buffer);
        py::gil_scoped_release release;
        return diagnose_bytes(rules, view.bytes(),
                              make_options(exit_code, chunk_size, text_cap, scheduler, max_bytes));
      },
      py::arg("rules"), py::arg("buffer"), py::arg("exit_code") = py::none(),
      py::arg("chunk_size") = DiagnoseOptions{}.chunk_size,
      py::arg("text_cap") = DiagnoseOptions{}.text_cap, py::arg("scheduler") = py::none(),
      py::arg("max_bytes") = 0);

  m.def(
      "diagnose_path",
      [](std::shared_ptr<RuleSet> rules, std::filesystem::path path, std::optional<int> exit_code,
         std::size_t chunk_size, std::size_t text_cap, std::optional<std::filesystem::path> scheduler,
         std::uint64_t max_bytes) {
        py::gil_scoped_release release;
        return diagnose_file(rules, path, make_options(exit_code, chunk_size, text_cap, scheduler, max_bytes));
      },
      py::arg("rules"), py::arg("path"), py::arg("exit_code") = py::none(),
      py::arg("chunk_size") = DiagnoseOptions{}.chunk_size,
      py::arg("text_cap") = DiagnoseOptions{}.text_cap, py::arg("scheduler") = py::none(),
      py::arg("max_bytes") = 0);

  m.def(
      "diagnose_job",
      [](std::shared_ptr<RuleSet> rules, std::vector<std::filesystem::path> paths, std::optional<int> exit_code,
         std::size_t chunk_size, std::size_t text_cap, std::string name,
         std::optional<std::filesystem::path> scheduler) {
        py::gil_scoped_release release;
        Diagnosis d = diagnose_job(rules, paths, make_options(exit_code, chunk_size, text_cap, scheduler));
        d.path = std::move(name);
        return d;
      },
      py::arg("rules"), py::arg("paths"), py::arg("exit_code") = py::none(),
      py::arg("chunk_size") = DiagnoseOptions{}.chunk_size,
      py::arg("text_cap") = DiagnoseOptions{}.text_cap, py::arg("name") = std::string(),
      py::arg("scheduler") = py::none());

  py::class_<FileRun>(m, "FileRun",
                      "Files diagnosed on threads of its own, taken in input order; see FileRun in _core.cpp.")
      .def(py::init<std::shared_ptr<RuleSet>, std::vector<FileRun::Task>, unsigned, bool, std::size_t,
                    std::uint64_t>(),
           py::arg("rules"), py::arg("tasks"), py::arg("jobs") = 1, py::arg("json") = false,
           py::arg("text_cap") = DiagnoseOptions{}.text_cap, py::arg("max_bytes") = 0)
      .def("take", &FileRun::take, py::arg("count"))
      .def("take_jsonl", &FileRun::take_jsonl, py::arg("count"), py::arg("fd"))
      .def("close", &FileRun::close);

  m.def(
      "list_logs",
      [](std::filesystem::path dir, std::vector<std::string> globs, bool hidden) {
        FileListing listing;
        {
          py::gil_scoped_release release;
          listing = list_logs(dir, FileFilter{std::move(globs), hidden});
        }
        std::vector<std::string> files;
        for (const auto& f : listing.files) files.push_back(f.string());
        return py::make_tuple(py::tuple(py::cast(files)), listing.skipped_binary,
                              py::tuple(py::cast(listing.problems)));
      },
      py::arg("dir"), py::arg("globs") = std::vector<std::string>{}, py::arg("hidden") = false);

  m.def("taxonomy", [] { return py::tuple(py::cast(gpudiag::taxonomy().classes)); });
  m.def("version", [] { return std::string(version()); });
  m.def("parse_exit_status", [](std::string_view text) { return gpudiag::parse_exit_status(text); }, py::arg("text"));
  m.def("hyperscan_version", [] { return std::string(hyperscan_version()); });
}
