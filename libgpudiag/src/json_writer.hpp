#pragma once

#include <string>
#include <string_view>

namespace gpudiag::detail {

// A minimal streaming JSON writer: enough for diagnoses, with correct string
// escaping and optional pretty-printing.
class JsonWriter {
 public:
  // A diagnosis's JSON is a few KiB: room for it at once, not grown by doubling.
  explicit JsonWriter(int indent = 0) : indent_(indent) { out_.reserve(4096); }
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(double d);
  JsonWriter& value(long long i);
  JsonWriter& value(unsigned long long i);
  JsonWriter& value(int i) { return value(static_cast<long long>(i)); }
  JsonWriter& value(bool b);
  JsonWriter& null();
  const std::string& str() const { return out_; }

 private:
  void before_value();
  void newline();
  std::string out_;
  int indent_;
  int depth_ = 0;
  bool first_ = true;
  bool after_key_ = false;
};

void append_json_string(std::string& out, std::string_view s);

}  // namespace gpudiag::detail
