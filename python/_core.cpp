// The thin native layer under the gpudiag Python package: it loads rules,
// scans with the GIL released and hands results back as plain objects. The
// Pythonic API lives in the pure-Python package around it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

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

py::dict evidence_dict(const Evidence& ev) {
  py::dict d;
  d["rule"] = ev.rule;
  d["class"] = ev.cls;
  d["line"] = ev.line;
  d["offset"] = ev.offset;
  d["text"] = ev.text;
  d["truncated"] = ev.truncated;
  d["count"] = ev.count;
  d["values"] = ev.values;
  d["rank"] = ev.rank ? py::object(py::int_(*ev.rank)) : py::none();
  d["host"] = ev.host.empty() ? py::object(py::none()) : py::object(py::str(ev.host));
  return d;
}

py::object reading_dict(const std::optional<LossReading>& r) {
  if (!r) return py::none();
  py::dict d;
  d["step"] = r->step;
  d["loss"] = r->loss;  // a Python float holds NaN and inf as they are
  d["line"] = r->line;
  d["step_reported"] = r->step_reported;
  return std::move(d);
}

py::dict trajectory_dict(const Trajectory& t) {
  py::dict d;
  d["shape"] = t.shape;
  d["readings"] = t.readings;
  d["rank"] = t.rank ? py::object(py::int_(*t.rank)) : py::none();
  d["max_step"] = t.max_step ? py::object(py::float_(*t.max_step)) : py::none();
  d["first"] = reading_dict(t.first);
  d["last"] = reading_dict(t.last);
  d["lowest"] = reading_dict(t.lowest);
  d["peak"] = reading_dict(t.peak);
  d["first_non_finite"] = reading_dict(t.first_non_finite);
  py::list series;
  for (const auto& r : t.series) series.append(py::make_tuple(r.step, r.loss));
  d["series"] = series;
  return d;
}

py::object optional_int(const std::optional<int>& v) {
  return v ? py::object(py::int_(*v)) : py::none();
}

py::object optional_str(const std::string& v) {
  return v.empty() ? py::object(py::none()) : py::object(py::str(v));
}

py::dict worker_dict(const FailedWorker& w) {
  py::dict d;
  d["rank"] = optional_int(w.rank);
  d["local_rank"] = optional_int(w.local_rank);
  d["host"] = optional_str(w.host);
  d["time"] = optional_str(w.time);
  d["exit_code"] = optional_int(w.exit_code);
  d["signal"] = optional_int(w.signal);
  d["signal_name"] = optional_str(w.signal_name);
  d["line"] = w.line;
  return d;
}

py::object launcher_dict(const std::optional<LauncherReport>& r) {
  if (!r) return py::none();
  py::dict d;
  d["root_cause"] = r->root_cause ? py::object(worker_dict(*r->root_cause)) : py::none();
  py::list others;
  for (const auto& w : r->other_failures) others.append(worker_dict(w));
  d["other_failures"] = others;
  d["other_failure_count"] = r->other_failure_count;
  return std::move(d);
}

// Keeps the native result so text and JSON are rendered by the same code as
// the command line.
struct Result {
  Diagnosis diagnosis;

  py::dict to_dict() const {
    const Diagnosis& x = diagnosis;
    py::dict d;
    d["class"] = x.cls;
    d["g15"] = x.g15;
    d["family"] = x.family;
    d["owner"] = x.owner;
    d["confidence"] = x.confidence;
    py::dict verdict;
    verdict["shows"] = x.verdict.shows;
    verdict["implies"] = x.verdict.implies;
    verdict["cannot_decide"] = x.verdict.cannot_decide;
    d["verdict"] = verdict;
    py::list evidence;
    for (const auto& ev : x.evidence) evidence.append(evidence_dict(ev));
    d["evidence"] = evidence;
    py::list findings;
    for (const auto& f : x.findings) {
      py::dict fd;
      fd["kind"] = f.kind;
      fd["class"] = f.cls;
      fd["message"] = f.message;
      fd["evidence"] = f.evidence ? py::object(evidence_dict(*f.evidence)) : py::none();
      findings.append(fd);
    }
    d["findings"] = findings;
    d["trajectory"] = trajectory_dict(x.trajectory);
    d["launcher"] = launcher_dict(x.launcher);
    d["exit_code"] = x.exit_code ? py::object(py::int_(*x.exit_code)) : py::none();
    d["bytes"] = x.bytes;
    d["lines"] = x.lines;
    return d;
  }
};

DiagnoseOptions make_options(std::optional<int> exit_code, std::size_t chunk_size,
                             std::size_t text_cap) {
  DiagnoseOptions o;
  o.exit_code = exit_code;
  o.chunk_size = chunk_size;
  o.text_cap = text_cap;
  return o;
}

py::dict rule_dict(const Rule& r) {
  py::dict d;
  d["id"] = r.id;
  d["class"] = r.cls;
  d["g15"] = r.g15;
  d["role"] = std::string(to_string(r.role));
  py::list patterns;
  for (const auto& p : r.patterns) {
    py::dict pd;
    pd["regex"] = p.regex;
    pd["flags"] = p.flags;
    patterns.append(pd);
  }
  d["patterns"] = patterns;
  py::dict extract;
  for (const auto& e : r.extract) extract[py::str(e.name)] = e.regex;
  d["extract"] = extract;
  d["description"] = r.description;
  d["source"] = r.source;
  return d;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "Native core of gpudiag; use the gpudiag package, not this module.";

  auto rule_error = py::register_exception<RuleError>(m, "RuleError", PyExc_ValueError);
  py::register_exception<InputError>(m, "InputError", PyExc_OSError);
  (void)rule_error;

  py::class_<RuleSet, std::shared_ptr<RuleSet>>(m, "NativeRuleSet")
      .def_property_readonly("origin", &RuleSet::origin)
      .def_property_readonly("digest", &RuleSet::digest)
      .def_property_readonly("cache_outcome",
                             [](const RuleSet& s) { return std::string(to_string(s.cache_outcome())); })
      .def_property_readonly("cache_file", &RuleSet::cache_file)
      .def("rules", [](const RuleSet& s) {
        py::list out;
        for (const auto& r : s.rules()) out.append(rule_dict(r));
        return out;
      });

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

  py::class_<Result>(m, "Result")
      .def("to_dict", &Result::to_dict)
      .def("to_text", [](const Result& r, const std::string& path, bool color) {
        return to_text(r.diagnosis, path, TextStyle{color});
      }, py::arg("path") = "", py::arg("color") = false)
      .def("to_json", [](const Result& r, const std::string& path, int indent) {
        return to_json(r.diagnosis, path, indent);
      }, py::arg("path") = "", py::arg("indent") = 0);

  m.def(
      "diagnose_buffer",
      [](std::shared_ptr<RuleSet> rules, py::object buffer, std::optional<int> exit_code,
         std::size_t chunk_size, std::size_t text_cap) {
        BufferView view(buffer);
        Result result;
        {
          py::gil_scoped_release release;
          result.diagnosis =
              diagnose_bytes(rules, view.bytes(), make_options(exit_code, chunk_size, text_cap));
        }
        return result;
      },
      py::arg("rules"), py::arg("buffer"), py::arg("exit_code") = py::none(),
      py::arg("chunk_size") = DiagnoseOptions{}.chunk_size,
      py::arg("text_cap") = DiagnoseOptions{}.text_cap);

  m.def(
      "diagnose_path",
      [](std::shared_ptr<RuleSet> rules, std::filesystem::path path, std::optional<int> exit_code,
         std::size_t chunk_size, std::size_t text_cap) {
        Result result;
        {
          py::gil_scoped_release release;
          result.diagnosis =
              diagnose_file(rules, path, make_options(exit_code, chunk_size, text_cap));
        }
        return result;
      },
      py::arg("rules"), py::arg("path"), py::arg("exit_code") = py::none(),
      py::arg("chunk_size") = DiagnoseOptions{}.chunk_size,
      py::arg("text_cap") = DiagnoseOptions{}.text_cap);

  m.def("taxonomy", [] {
    py::list out;
    for (const auto& c : all_classes()) {
      py::dict d;
      d["id"] = std::string(c.id);
      d["family"] = std::string(c.family);
      d["owner"] = std::string(c.owner);
      d["g15"] = std::string(c.g15);
      d["title"] = std::string(c.title);
      out.append(d);
    }
    return out;
  });
  m.def("version", [] { return std::string(version()); });
  m.def("hyperscan_version", [] { return std::string(hyperscan_version()); });
}
