#include "commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <iostream>
#include <optional>

#include <simdjson.h>

#include "gpudiag/gpudiag.hpp"
#include "schema.hpp"

namespace po = boost::program_options;

namespace gpudiag::cli {

// "1048576", "500M", "2G": K, M, G and T are powers of 1024. None when it is
// not such a size or does not fit in 64 bits.
std::optional<std::uint64_t> parse_size(std::string_view s) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  const std::string_view unit = s.substr(static_cast<std::size_t>(end - s.data()));
  static constexpr std::string_view kUnits = "KMGT";
  if (unit.empty()) return n;
  const std::size_t power = kUnits.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
  if (power == std::string_view::npos || !(unit.size() == 1 || (unit.size() == 3 && (unit.substr(1) == "iB" || unit.substr(1) == "ib"))))
    return std::nullopt;
  const unsigned shift = 10 * static_cast<unsigned>(power + 1);
  if (n > (UINT64_MAX >> shift)) return std::nullopt;
  return n << shift;
}

std::string python() {
  if (const char* p = std::getenv("GPUDIAG_PYTHON"); p && *p) return p;
  std::error_code ec;
  const auto beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "python3";
  if (!ec && ::access(beside.c_str(), X_OK) == 0) return beside.string();
  return "python3";
}

bool want_color(const std::string& mode, int fd) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* term = std::getenv("TERM");
  return ::isatty(fd) && !std::getenv("NO_COLOR") && !(term && std::string(term) == "dumb");
}

std::string render(const Diagnosis& d, const std::string& format, const TextStyle& style) {
  if (format == "text") return to_text(d, {}, style);
  if (format == "brief") return to_brief(d, {}, style) + "\n";
  return to_json(d, {}, format == "json" ? 2 : 0);
}

namespace {

// "--exit-code -9" would read as an option; join such pairs before parsing.
std::vector<std::string> join_negative_values(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--exit-code" && i + 1 < args.size()) {
      out.push_back(args[i] + "=" + args[i + 1]);
      ++i;
    } else {
      out.push_back(args[i]);
    }
  }
  return out;
}

po::variables_map parse(const std::vector<std::string>& args, const po::options_description& opts,
                        const po::positional_options_description& positional) {
  po::variables_map vm;
  po::store(po::command_line_parser(join_negative_values(args))
                .options(opts)
                .positional(positional)
                .style(po::command_line_style::default_style &
                       ~po::command_line_style::allow_guessing)
                .run(),
            vm);
  po::notify(vm);
  return vm;
}


std::string error_json(const std::string& path, const std::string& error, int indent) {
  if (indent) return "{\n  \"path\": " + json_string(path) + ",\n  \"error\": " + json_string(error) + "\n}";
  return "{\"path\":" + json_string(path) + ",\"error\":" + json_string(error) + "}";
}

void indent_block(std::string& s, int spaces) {
  std::string pad(spaces, ' ');
  std::string out = pad;
  for (char c : s) {
    out += c;
    if (c == '\n') out += pad;
  }
  s = out;
}

// The top-level fields of the JSON output, read from the built-in schema so
// that --help and the serializer's documentation cannot drift apart.
std::string json_fields_help() {
  simdjson::dom::parser parser;
  simdjson::padded_string text(diagnosis_schema());
  simdjson::dom::object properties;
  if (parser.parse(text)["properties"].get(properties)) return "";
  std::string out = "JSON fields (docs/diagnosis.schema.json has the nested ones):\n";
  for (auto [name, field] : properties) {
    std::string_view description;
    if (field["description"].get(description)) description = "";
    out += help_row(std::string(name), std::string(description), 15);
  }
  return out + "An input that could not be read appears as {path, error}.\n";
}

// What a directory listing could not list, on stderr; it makes the status 1.
void report_problems(const FileListing& listing, int& status) {
  for (const std::string& problem : listing.problems) {
    std::cerr << "gpudiag: " << problem << "\n";
    status = kInputFailed;
  }
}

// The operands with each directory replaced by the logs below it. What could
// not be listed is said on stderr and makes the status 1.
std::vector<std::string> expand_operands(const std::vector<std::string>& operands, const FileFilter& filter,
                                         int& status) {
  std::vector<std::string> files;
  for (const std::string& operand : operands) {
    std::error_code ec;
    if (operand == "-" || !std::filesystem::is_directory(operand, ec)) {
      files.push_back(operand);
      continue;
    }
    FileListing listing = list_logs(operand, filter);
    report_problems(listing, status);
    if (listing.skipped_binary)
      std::cerr << "gpudiag: " << operand << ": skipped " << listing.skipped_binary << " binary file"
                << (listing.skipped_binary == 1 ? "" : "s") << "\n";
    if (listing.files.empty()) std::cerr << "gpudiag: " << operand << ": no log files in it\n";
    for (const auto& f : listing.files) files.push_back(f.string());
  }
  return files;
}

// The logs below `dir`, as one job. What could not be listed is said on
// stderr and makes the status 1.
Diagnosis diagnose_directory_as_job(const std::shared_ptr<const RuleSet>& rules, const std::string& dir,
                                    const FileFilter& filter, const DiagnoseOptions& options, int& status) {
  FileListing listing = list_logs(dir, filter);
  report_problems(listing, status);
  if (listing.files.empty()) throw InputError(dir + ": no log files in it");
  Diagnosis d = diagnose_job(rules, listing.files, options);
  d.path = dir;
  return d;
}

}  // namespace

namespace {

constexpr const char* kDiagnoseUsage = R"(usage: gpudiag diagnose [options] [FILE|DIR...]

Diagnoses each log and prints a verdict: the class, who owns the problem,
the lines that show it, what it implies and what the log cannot tell.

inputs as they are found:
  '-'                   standard input; also read when no FILE is given and
                        standard input is not a terminal ('kubectl logs ... |
                        gpudiag diagnose')
  DIR                   every file below it, recursively, in path order, but
                        hidden and binary ones (narrow it with --glob)
  compressed            gzip, zstd, bzip2 and xz, known by content, whatever
                        the name; a truncated or corrupt archive is diagnosed
                        up to where it broke, and says so
  container logs        Docker's JSON lines ({"log": ..., "stream": ...}) and
                        CRI records (TIMESTAMP stderr F text: /var/log/pods)
                        are unwrapped

formats:
  text                  the verdict, a dozen lines a log (the default)
  brief                 one line a log, as grep writes a match:
                        PATH:LINE: CLASS (OWNER, CONFIDENCE): TEXT, where LINE
                        and TEXT are the deciding line (left out when no line
                        decided)
  json, jsonl           one array, or one object a line; the fields below

)";

constexpr const char* kDiagnoseExamples = R"(
examples:
  gpudiag diagnose train.log
  gpudiag diagnose --format brief --stats logs/
  gpudiag diagnose --fail-on owner:infra,class:cuda_oom logs/ || page-oncall
  gpudiag diagnose --exit-code -9 --format json rank*.log
)";

constexpr const char* kDiagnoseStatus = R"(
exit status: 0 all diagnosed; 1 an input could not be read, or only in part
(the others are still diagnosed); 2 a usage error or rules that do not load;
3 with --fail-on, a diagnosis matched it (this wins over 1).
)";

// --fail-on's criteria: a diagnosis matches when any (field, value) pair does.
using FailOn = std::vector<std::pair<std::string, std::string>>;

// The values each --fail-on field takes, from the rule set's taxonomy: a
// misspelt class is a usage error, not an alert that never fires.
std::map<std::string, std::set<std::string>> fail_on_values(const RuleSet& rules) {
  std::map<std::string, std::set<std::string>> values;
  for (const auto& c : rules.taxonomy().classes) {
    values["class"].insert(c.id);
    values["owner"].insert(c.owner);
    values["family"].insert(c.family);
    values["g15"].insert(c.g15);
  }
  values["owner"].insert("none");
  values["g15"].insert("generic");
  return values;
}

// "owner:infra,class:cuda_oom" (repeatable) into criteria; nullopt after
// saying on stderr what is wrong.
std::optional<FailOn> parse_fail_on(const std::vector<std::string>& specs, const RuleSet& rules) {
  const auto known = fail_on_values(rules);
  FailOn criteria;
  for (const std::string& spec : specs) {
    std::size_t begin = 0;
    while (begin <= spec.size()) {
      const std::size_t comma = std::min(spec.find(',', begin), spec.size());
      const std::string item = spec.substr(begin, comma - begin);
      begin = comma + 1;
      const std::size_t colon = item.find(':');
      const std::string field = item.substr(0, colon), value = colon == std::string::npos ? "" : item.substr(colon + 1);
      const auto values = known.find(field);
      if (colon == std::string::npos || values == known.end()) {
        std::cerr << "gpudiag diagnose: --fail-on takes FIELD:VALUE pairs (class, owner, family or g15), "
                     "such as owner:infra,class:cuda_oom; not '" << item << "'\n";
        return std::nullopt;
      }
      if (!values->second.count(value)) {
        std::cerr << "gpudiag diagnose: --fail-on " << field << ":" << value << ": no such " << field
                  << " (one of:";
        for (const auto& v : values->second) std::cerr << " " << v;
        std::cerr << ")\n";
        return std::nullopt;
      }
      criteria.emplace_back(field, value);
    }
  }
  return criteria;
}

bool matches(const Diagnosis& d, const FailOn& criteria) {
  for (const auto& [field, value] : criteria) {
    const std::string& actual = field == "class" ? d.cls : field == "owner" ? d.owner : field == "family" ? d.family : d.g15;
    if (actual == value) return true;
  }
  return false;
}

// What --stats prints on stderr when the inputs are done, like `rg --stats`.
struct Stats {
  std::size_t inputs = 0, diagnosed = 0, unreadable = 0;
  std::uint64_t bytes = 0;
  std::map<std::string, std::size_t> by_owner, by_class;

  void add(const Diagnosis& d) {
    ++inputs;
    ++diagnosed;
    bytes += d.bytes;
    ++by_owner[d.owner];
    ++by_class[d.cls];
  }
  void add_failure() {
    ++inputs;
    ++unreadable;
  }
  void print(std::ostream& out, double seconds) const {
    char line[160];
    std::snprintf(line, sizeof line, "%zu input%s: %zu diagnosed, %zu could not be read; %.2f MiB of text in %.3f s\n",
                  inputs, inputs == 1 ? "" : "s", diagnosed, unreadable, static_cast<double>(bytes) / (1 << 20), seconds);
    out << line;
    table(out, "owner", by_owner);
    table(out, "class", by_class);
  }
  // Most frequent first, then by name: the one to look at leads.
  static void table(std::ostream& out, const char* title, const std::map<std::string, std::size_t>& counts) {
    std::vector<std::pair<std::string, std::size_t>> rows(counts.begin(), counts.end());
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::size_t width = std::strlen(title);
    for (const auto& row : rows) width = std::max(width, row.first.size());
    char line[256];
    std::snprintf(line, sizeof line, "%-*s %6s\n", static_cast<int>(width), title, "logs");
    out << line;
    for (const auto& [name, n] : rows) {
      std::snprintf(line, sizeof line, "%-*s %6zu\n", static_cast<int>(width), name.c_str(), n);
      out << line;
    }
  }
};

}  // namespace

int run_diagnose(const std::vector<std::string>& args) {
  po::options_description opts;
  opts.add_options()
      ("help,h", "show this help")
      ("format,f", po::value<std::string>()->default_value("text")->value_name("FORMAT"),
       "text, brief, json or jsonl (above)")
      ("stats", "when the inputs are done, print on stderr how many were diagnosed and how many "
                "logs each owner and each class has")
      ("fail-on", po::value<std::vector<std::string>>()->composing()->value_name("FIELD:VALUE,..."),
       "exit with status 3 when any input's diagnosis has one of these values: class:cuda_oom, "
       "owner:infra, family:..., g15:...; pairs separated by commas, or the option repeated. For "
       "scripts and alerting; the output is unchanged")
      ("exit-code", po::value<std::string>()->value_name("CODE"),
       "the job's exit status (e.g. -9, 137, 1; a Windows status as Python prints it, 3221225477, "
       "or as cmd does, -1073741819); it counts as evidence and applies to every FILE")
      ("sacct", po::value<std::string>()->value_name("FILE"),
       "the scheduler's record of the job: Slurm's 'sacct --json -j ID', 'sacct -P -j ID' or "
       "'scontrol show job ID' output, saved to a file. Its state (TIMEOUT, NODE_FAIL, "
       "PREEMPTED, CANCELLED, OUT_OF_MEMORY, COMPLETED) counts as evidence, read as a line "
       "after the log's last; its exit code stands in for --exit-code. Applies to every FILE")
      ("glob,g", po::value<std::vector<std::string>>()->composing()->value_name("GLOB"),
       "in a DIR, read only the files matching GLOB ('*.log', 'rank*/**/*.out'); '!GLOB' "
       "leaves them out; repeatable, the last match decides. A GLOB with a '/' is "
       "matched against the path below DIR, one without against the file name")
      ("hidden", "in a DIR, read hidden files and directories too")
      ("job", "each DIR is one job: its files (per-rank or per-node logs: rank3.log, "
              "4714782-3.out, torchrun's --log-dir) are merged into one timeline by the times "
              "their lines state, lines without a rank tagged with the file's, and diagnosed as one log")
      ("max-bytes", po::value<std::string>()->value_name("SIZE"),
       "read no more than SIZE bytes of each input (e.g. 500M, 2G; K, M, G and T are powers of "
       "1024); the diagnosis is of what was read and says where it stopped, with exit status 1. "
       "Devices that never end (/dev/zero) are read up to 1G unless this says otherwise")
      ("rules,r", po::value<std::string>()->value_name("DIR"), "a directory of rule files to use instead of the shipped rules")
      ("color", po::value<std::string>()->default_value("auto")->value_name("WHEN"), "auto, always or never")
      ("no-cache", "compile the rules without reading or writing the on-disk cache");
  // FILE operands are parsed as an option that --help does not show.
  po::options_description all;
  all.add(opts).add_options()("file", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("file", -1);
  po::variables_map vm;
  try {
    vm = parse(args, all, positional);
  } catch (const po::error& e) {
    std::cerr << "gpudiag diagnose: " << e.what() << "\n(see 'gpudiag diagnose --help')\n";
    return kUsage;
  }
  if (vm.count("help")) {
    std::cout << kDiagnoseUsage << format_options(opts) << "\n" << json_fields_help() << kDiagnoseExamples
              << kDiagnoseStatus;
    return kOk;
  }
  const std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "brief" && format != "json" && format != "jsonl") {
    std::cerr << "gpudiag diagnose: --format must be text, brief, json or jsonl, not '" << format << "'\n";
    return kUsage;
  }
  const std::string color = vm["color"].as<std::string>();
  if (color != "auto" && color != "always" && color != "never") {
    std::cerr << "gpudiag diagnose: --color must be auto, always or never, not '" << color << "'\n";
    return kUsage;
  }
  // As grep and rg do: no FILE reads a pipe, but never waits on a terminal.
  std::vector<std::string> operands;
  if (vm.count("file")) operands = vm["file"].as<std::vector<std::string>>();
  else if (!::isatty(STDIN_FILENO)) operands = {"-"};
  else {
    std::cerr << "gpudiag diagnose: no FILE given (give '-' or a pipe to read standard input; see "
                 "'gpudiag diagnose --help')\n";
    return kUsage;
  }
  const std::shared_ptr<const RuleSet> rules = load_rules(vm);
  if (!rules) return kUsage;
  FailOn fail_on;
  if (vm.count("fail-on")) {
    const auto parsed = parse_fail_on(vm["fail-on"].as<std::vector<std::string>>(), *rules);
    if (!parsed) return kUsage;
    fail_on = *parsed;
  }

  DiagnoseOptions options;
  if (vm.count("exit-code")) {
    const std::string code = vm["exit-code"].as<std::string>();
    options.exit_code = parse_exit_status(code);
    if (!options.exit_code) {
      std::cerr << "gpudiag diagnose: --exit-code takes an exit status such as -9, 137 or 3221225477, not '" << code
                << "'\n";
      return kUsage;
    }
  }
  if (vm.count("max-bytes")) {
    const std::string size = vm["max-bytes"].as<std::string>();
    const std::optional<std::uint64_t> bytes = parse_size(size);
    if (!bytes || *bytes == 0) {
      std::cerr << "gpudiag diagnose: --max-bytes takes a size such as 1048576, 500M or 2G, not '" << size << "'\n";
      return kUsage;
    }
    options.max_bytes = *bytes;
  }
  if (vm.count("sacct")) {
    try {
      options.scheduler = read_scheduler_record(vm["sacct"].as<std::string>());
    } catch (const InputError& e) {
      std::cerr << "gpudiag diagnose: --sacct " << e.what() << "\n";
      return kUsage;
    }
  }
  TextStyle style{want_color(color)};
  FileFilter filter;
  if (vm.count("glob")) filter.globs = vm["glob"].as<std::vector<std::string>>();
  filter.hidden = vm.count("hidden") > 0;
  int status = kOk;
  bool matched = false;
  Stats stats;
  const auto started = std::chrono::steady_clock::now();
  const bool job = vm.count("job") > 0;
  if (job) {
    for (const std::string& o : operands)
      if (std::error_code ec; !std::filesystem::is_directory(o, ec)) {
        std::cerr << "gpudiag diagnose: --job takes directories, one job each; '" << o << "' is not one\n";
        return kUsage;
      }
  }
  const std::vector<std::string> files = job ? operands : expand_operands(operands, filter, status);
  bool first = true;
  const bool plain = format == "text" || format == "brief";
  if (format == "json") std::cout << "[\n";
  for (const auto& file : files) {
    std::string rendered;
    try {
      Diagnosis d = job ? diagnose_directory_as_job(rules, file, filter, options, status)
                        : diagnose_file(rules, file, options);
      if (!d.input.damage.empty()) {
        std::cerr << "gpudiag: " << file << ": " << input_problem(d.input) << "; diagnosed the " << d.lines
                  << (d.lines == 1 ? " line" : " lines") << " before it\n";
        status = kInputFailed;
      }
      stats.add(d);
      matched = matched || matches(d, fail_on);
      rendered = render(d, format, style);
    } catch (const std::exception& e) {
      std::cerr << "gpudiag: " << e.what() << "\n";
      status = kInputFailed;
      stats.add_failure();
      if (plain) continue;
      rendered = error_json(file, e.what(), format == "json" ? 2 : 0);
    }
    if (format == "json") {
      indent_block(rendered, 2);
      std::cout << (first ? "" : ",\n") << rendered;
    } else if (format == "jsonl") {
      std::cout << rendered << "\n";
    } else {
      std::cout << (first || format == "brief" ? "" : "\n") << rendered;
    }
    std::cout.flush();
    first = false;
  }
  if (format == "json") std::cout << (first ? "]\n" : "\n]\n");
  if (vm.count("stats"))
    stats.print(std::cerr, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return matched ? kMatched : status;
}

namespace {

// `rules check`: loads a directory, compiles it and runs its examples.
int check_rules(const po::variables_map& vm) {
  const bool builtin = !vm.count("dir");
  std::shared_ptr<const RuleSet> rules;
  try {
    CacheOptions cache;
    cache.enabled = !vm.count("no-cache");
    rules = builtin ? RuleSet::builtin(cache) : RuleSet::load_dir(vm["dir"].as<std::string>(), cache);
  } catch (const RuleError& e) {
    std::cerr << "gpudiag: " << e.what() << "\n";
    return kUsage;
  }
  // $GPUDIAG_RULES stands in for the shipped rules: say which were checked.
  const std::string dir = rules->origin() == "builtin" ? "the shipped rules"
                          : builtin ? rules->origin() + " ($GPUDIAG_RULES)"
                                    : rules->origin();
  const auto failures = rules->check_examples();
  for (const auto& f : failures)
    std::cerr << "gpudiag: " << f.file << ": rule " << f.rule_id << ": " << f.problem << "\n";
  std::size_t patterns = 0, without = 0;
  for (const auto& r : rules->rules()) {
    patterns += r.patterns.size();
    without += r.examples.empty();
  }
  std::cout << (failures.empty() ? "ok: " : "failed: ") << rules->rules().size() << " rules, "
            << patterns << " patterns, " << rules->taxonomy().classes.size() << " classes, "
            << rules->example_count() << " examples";
  if (!failures.empty()) std::cout << " (" << failures.size() << " failing)";
  if (without) std::cout << "; " << without << " rule" << (without == 1 ? " has" : "s have") << " no examples";
  std::cout << " in " << dir << " (cache: " << to_string(rules->cache_outcome()) << ")\n";
  if (!rules->one_stream_reason().empty())
    std::cout << "note: logs are scanned as one stream, without looking lines up by layout (slower on long logs): "
              << rules->one_stream_reason() << "\n";
  return failures.empty() ? kOk : kInputFailed;
}

// One rule as a JSON object, on one line.
std::string rule_json(const Rule& r) {
  std::string out = "{\"id\": " + json_string(r.id) + ", \"class\": " + (r.cls.empty() ? "null" : json_string(r.cls)) +
                    ", \"g15\": " + (r.cls.empty() ? "null" : json_string(r.g15)) +
                    ", \"role\": " + json_string(std::string(to_string(r.role))) + ", \"patterns\": [";
  for (std::size_t i = 0; i < r.patterns.size(); ++i) out += (i ? ", " : "") + json_string(r.patterns[i].regex);
  return out + "], \"examples\": " + std::to_string(r.examples.size()) + ", \"source\": " + json_string(r.source) + "}";
}

// json: one array, a rule a line; jsonl: one object a line.
void list_rules_json(const RuleSet& rules, bool lines) {
  bool first = true;
  if (!lines) std::cout << "[";
  for (const auto& r : rules.rules()) {
    if (lines) std::cout << rule_json(r) << "\n";
    else std::cout << (first ? "\n  " : ",\n  ") << rule_json(r);
    first = false;
  }
  if (!lines) std::cout << "\n]\n";
}

}  // namespace

int run_rules(const std::vector<std::string>& args) {
  const char* usage =
      "usage: gpudiag rules list [--rules DIR] [--format text|json|jsonl]\n"
      "       gpudiag rules check [DIR]\n\n"
      "list   the rules in priority order (earlier rules win)\n"
      "check  load and compile a rules directory (default: the shipped rules) and run\n"
      "       every rule's examples: the lines it must match, with the values it must\n"
      "       extract, and the lines it must not match\n\n"
      "exit status: 0 ok, 1 an example failed, 2 usage error or rules that do not load\n"
      "(the file, the rule or class, and the problem are named on stderr).\n";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? std::cerr : std::cout) << usage;
    return args.empty() ? kUsage : kOk;
  }
  const std::string sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  po::options_description opts;
  opts.add_options()("help,h", "show this help")
      ("rules,r", po::value<std::string>()->value_name("DIR"), "list: the rules directory (default: the shipped rules)")
      ("format,f", po::value<std::string>()->default_value("text")->value_name("FORMAT"),
       "list: text (a table), json (one array) or jsonl (one object a line)")
      ("no-cache", "do not read or write the on-disk cache");
  po::options_description all;
  all.add(opts).add_options()("dir", po::value<std::string>());
  po::positional_options_description positional;
  positional.add("dir", 1);
  po::variables_map vm;
  try {
    vm = parse(rest, all, positional);
  } catch (const po::error& e) {
    std::cerr << "gpudiag rules: " << e.what() << "\n\n" << usage;
    return kUsage;
  }
  if (vm.count("help")) {
    std::cout << usage << "\n" << format_options(opts);
    return kOk;
  }
  if (sub == "check") return check_rules(vm);
  if (sub != "list") {
    std::cerr << "gpudiag rules: unknown subcommand '" << sub << "'\n\n" << usage;
    return kUsage;
  }
  if (vm.count("dir")) {
    std::cerr << "gpudiag rules list: unexpected argument '" << vm["dir"].as<std::string>()
              << "' (use --rules DIR)\n";
    return kUsage;
  }
  const std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json" && format != "jsonl") {
    std::cerr << "gpudiag rules list: --format must be text, json or jsonl, not '" << format << "'\n";
    return kUsage;
  }
  const std::shared_ptr<const RuleSet> rules = load_rules(vm);
  if (!rules) return kUsage;
  if (format != "text") {
    list_rules_json(*rules, format == "jsonl");
    return kOk;
  }
  std::cout << "rules from " << rules->origin() << " (" << rules->rules().size()
            << ", earlier wins)\n";
  int n = 0;
  for (const auto& r : rules->rules())
    std::printf("%4d  %-34s %-22s %-15s g15=%s\n", ++n, r.id.c_str(),
                r.cls.empty() ? "(per line)" : r.cls.c_str(), std::string(to_string(r.role)).c_str(),
                r.cls.empty() ? "-" : r.g15.c_str());
  return kOk;
}

std::shared_ptr<const RuleSet> load_rules(const po::variables_map& vm) {
  CacheOptions cache;
  cache.enabled = !vm.count("no-cache");
  try {
    auto rules = vm.count("rules") ? RuleSet::load_dir(vm["rules"].as<std::string>(), cache) : RuleSet::builtin(cache);
    // Kept until the process exits, which frees them at once: freeing the
    // rules' thousands of strings one by one cost a small log's call more
    // than reading it.
    static auto* const kept = new std::vector<std::shared_ptr<const RuleSet>>;
    kept->push_back(rules);
    return rules;
  } catch (const RuleError& e) {
    std::cerr << "gpudiag: " << e.what() << "\n";
    return nullptr;
  }
}

}  // namespace gpudiag::cli
