#include "rule_snapshot.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpudiag::detail {
namespace {

// Each type's fields, in one list that both the writer and the reader walk.
// A field left out here is caught by the test that compares the snapshot of
// the shipped rules with the rules parsed from their JSON.
template <class Io> void fields(Io& io, Pattern& p) { io(p.regex, p.flags, p.prefilter); }
template <class Io> void fields(Io& io, Extraction& e) { io(e.name, e.regex); }
template <class Io> void fields(Io& io, Example& e) { io(e.line, e.match, e.values); }
template <class Io> void fields(Io& io, Rule& r) {
  io(r.id, r.cls, r.g15, r.role, r.cascade, r.severity, r.frames, r.raised_in, r.phase, r.unless,
     r.patterns, r.extract, r.description, r.source);
}
template <class Io> void fields(Io& io, ClassInfo& c) {
  io(c.id, c.family, c.owner, c.g15, c.title, c.cause, c.action, c.rerun, c.rerun_note,
     c.cannot_decide, c.description, c.exit_signals, c.exit_codes, c.signal_exit_cascade,
     c.signal_exit_stop, c.tier, c.survivable, c.stall, c.stop, c.resume_failure, c.outcome,
     c.max_steps, c.source);
}
template <class Io> void fields(Io& io, FamilyInfo& f) { io(f.id, f.title); }
template <class Io> void fields(Io& io, Taxonomy& t) { io(t.families, t.classes, t.g15); }
template <class Io> void fields(Io& io, Catalog& c) { io(c.taxonomy, c.defines); }
// The catalog first: read_snapshot_catalog reads no further. The examples
// last, each rule's in turn: read_snapshot_rules stops before them.
template <class Io> void fields(Io& io, ParsedRules& p) {
  io(p.catalog, p.rules);
  examples(io, p.rules);
}
template <class Io> void examples(Io& io, std::vector<Rule>& rules) {
  for (Rule& r : rules) io(r.examples);
}

template <class Io, class T>
concept HasFields = requires(Io& io, T& value) { fields(io, value); };

// The first bytes of a snapshot, so that other bytes are refused at once.
constexpr std::string_view kMagic = "gpudiag rule snapshot 1\n";

class Writer {
 public:
  Writer() : out_(kMagic) {}
  template <class... T> void operator()(const T&... values) { (put(values), ...); }
  std::string take() { return std::move(out_); }

 private:
  void put_size(std::uint64_t n) {  // LEB128: most sizes take one byte
    do {
      out_.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
      n >>= 7;
    } while (n);
  }
  void put(const std::string& s) {
    put_size(s.size());
    out_ += s;
  }
  void put(bool b) { out_.push_back(b ? 1 : 0); }
  void put(int v) { put_size(static_cast<std::uint32_t>(v)); }
  void put(double d) {
    char bytes[sizeof d];
    std::memcpy(bytes, &d, sizeof d);
    out_.append(bytes, sizeof d);
  }
  template <class E> requires std::is_enum_v<E> void put(E e) { put_size(static_cast<std::uint64_t>(e)); }
  template <class T> void put(const std::optional<T>& o) {
    put(o.has_value());
    if (o) put(*o);
  }
  template <class T> void put(const std::vector<T>& v) {
    put_size(v.size());
    for (const T& x : v) put(x);
  }
  template <class A, class B> void put(const std::pair<A, B>& p) { put(p.first), put(p.second); }
  template <class K, class V, class C> void put(const std::map<K, V, C>& m) {
    put_size(m.size());
    for (const auto& [k, v] : m) put(k), put(v);
  }
  // Walking the fields needs a mutable object (the reader fills them); the
  // writer only reads them.
  template <class S> requires HasFields<Writer, S> void put(const S& s) { fields(*this, const_cast<S&>(s)); }

  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {
    if (in_.substr(0, kMagic.size()) != kMagic) fail("it does not start as one");
    in_.remove_prefix(kMagic.size());
  }
  template <class... T> void operator()(T&... values) { (get(values), ...); }
  std::size_t left() const { return in_.size(); }
  void finish() const {
    if (!in_.empty()) fail("bytes are left over");
  }

 private:
  [[noreturn]] static void fail(const char* why) {
    throw std::runtime_error(std::string("not a rule snapshot of this build: ") + why);
  }
  std::uint64_t get_size() {
    std::uint64_t n = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in_.empty()) fail("it ends in a number");
      const auto b = static_cast<unsigned char>(in_.front());
      in_.remove_prefix(1);
      n |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return n;
    }
    fail("a number is too long");
  }
  // A count of things each at least a byte long: no more than the bytes left.
  std::size_t get_count() {
    const std::uint64_t n = get_size();
    if (n > in_.size()) fail("a count runs past its end");
    return static_cast<std::size_t>(n);
  }
  void get(std::string& s) {
    const std::size_t n = get_count();
    s.assign(in_.data(), n);
    in_.remove_prefix(n);
  }
  void get(bool& b) {
    if (in_.empty()) fail("it ends in a flag");
    b = in_.front() != 0;
    in_.remove_prefix(1);
  }
  void get(int& v) { v = static_cast<int>(static_cast<std::uint32_t>(get_size())); }
  void get(double& d) {
    if (in_.size() < sizeof d) fail("it ends in a number");
    std::memcpy(&d, in_.data(), sizeof d);
    in_.remove_prefix(sizeof d);
  }
  template <class E> requires std::is_enum_v<E> void get(E& e) { e = static_cast<E>(get_size()); }
  template <class T> void get(std::optional<T>& o) {
    bool has = false;
    get(has);
    o.reset();
    if (has) get(o.emplace());
  }
  template <class T> void get(std::vector<T>& v) {
    v.clear();
    v.resize(get_count());
    for (T& x : v) get(x);
  }
  template <class A, class B> void get(std::pair<A, B>& p) { get(p.first), get(p.second); }
  template <class K, class V, class C> void get(std::map<K, V, C>& m) {
    m.clear();
    for (std::size_t n = get_count(); n > 0; --n) {
      std::pair<K, V> kv;
      get(kv);
      m.insert(m.end(), std::move(kv));
    }
  }
  template <class S> requires HasFields<Reader, S> void get(S& s) { fields(*this, s); }

  std::string_view in_;
};

}  // namespace

std::string write_snapshot(const ParsedRules& parsed) {
  Writer w;
  w(parsed);
  return w.take();
}

ParsedRules read_snapshot(std::string_view bytes) {
  Reader r(bytes);
  ParsedRules parsed;
  r(parsed);
  r.finish();
  return parsed;
}

ParsedRules read_snapshot_rules(std::string_view bytes) {
  Reader r(bytes);
  ParsedRules parsed;
  r(parsed.catalog, parsed.rules);
  parsed.examples_deferred = true;
  return parsed;
}

void read_snapshot_examples(std::string_view bytes, std::vector<Rule>& rules) {
  Reader r(bytes);
  ParsedRules skipped;
  r(skipped.catalog, skipped.rules);
  if (skipped.rules.size() != rules.size()) throw std::runtime_error("not the rules of this rule snapshot");
  examples(r, rules);
  r.finish();
}

Catalog read_snapshot_catalog(std::string_view bytes) {
  Reader r(bytes);
  Catalog catalog;
  r(catalog);
  return catalog;
}

}  // namespace gpudiag::detail
