#include <gtest/gtest.h>
#include <simdjson.h>

#include "test_util.hpp"

using namespace gpudiag;
using namespace gpudiag::testing;

TEST(Render, JsonHasTheDocumentedFields) {
  Diagnosis d = diagnose_text("a \"quoted\"\tline\nModuleNotFoundError: No module named 'apex'\n", 1);
  std::string json = to_json(d, "logs/run 1.log");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  EXPECT_EQ(std::string_view(doc["path"]), "logs/run 1.log");
  EXPECT_EQ(std::string_view(doc["class"]), "missing_module");
  EXPECT_EQ(std::string_view(doc["g15"]), "missing_module");
  EXPECT_EQ(std::string_view(doc["family"]), "startup");
  EXPECT_EQ(std::string_view(doc["owner"]), "job");
  EXPECT_GT(double(doc["confidence"]), 0.5);
  EXPECT_EQ(int64_t(doc["exit_code"]), 1);
  auto ev = doc["evidence"].at(0);
  EXPECT_EQ(std::string_view(ev["rule"]), "missing_module.import");
  EXPECT_EQ(uint64_t(ev["line"]), 2u);
  EXPECT_EQ(uint64_t(ev["offset"]), 16u);
  EXPECT_EQ(std::string_view(ev["values"]["module"]), "apex");
  EXPECT_GT(simdjson::dom::array(doc["verdict"]["shows"]).size(), 0u);
  EXPECT_GT(simdjson::dom::array(doc["verdict"]["implies"]).size(), 0u);
  EXPECT_GT(simdjson::dom::array(doc["verdict"]["cannot_decide"]).size(), 0u);
  EXPECT_TRUE(doc["findings"].is_array());
  EXPECT_EQ(to_json(d).find("\"path\""), std::string::npos);
  EXPECT_EQ(json.find('\n'), std::string::npos);  // compact: one line for jsonl
}

TEST(Render, JsonEscapesControlCharacters) {
  std::string s = json_string(std::string("a\"b\\c\n\x01", 7));
  EXPECT_EQ(s, "\"a\\\"b\\\\c\\n\\u0001\"");
}

// Every byte that needs escaping is escaped wherever it lies in a long
// string (the writer looks sixteen bytes at a time), and every other byte,
// UTF-8 included, is copied as it is.
TEST(Render, JsonEscapesAtEveryPosition) {
  auto expected = [](std::string_view s) {
    static const char hex[] = "0123456789abcdef";
    std::string out = "\"";
    for (char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '"') out += "\\\"";
      else if (c == '\\') out += "\\\\";
      else if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else if (c == '\t') out += "\\t";
      else if (c < 0x20 || c == 0x7f) out += std::string("\\u00") + hex[c >> 4] + hex[c & 0xf];
      else out += ch;
    }
    return out + "\"";
  };
  const std::string specials = std::string("\"\\\n\r\t\x01\x1f\x7f", 8) + " \xc3\xa9";  // and plain ones
  for (std::size_t size : {1u, 15u, 16u, 17u, 31u, 33u, 100u}) {
    for (std::size_t at = 0; at < size; ++at) {
      for (char special : specials) {
        std::string s(size, 'x');
        s[at] = special;
        s[size - 1 - at / 2] = specials[at % specials.size()];
        if (static_cast<unsigned char>(s.back()) == 0xc3) s.back() = 'y';  // keep the UTF-8 whole
        std::string valid = s;
        for (std::size_t i = 0; i < valid.size(); ++i)  // a lone 0xc3/0xa9 is invalid: test those apart
          if (static_cast<unsigned char>(valid[i]) >= 0x80) valid[i] = 'z';
        ASSERT_EQ(json_string(valid), expected(valid)) << size << " " << at;
      }
    }
  }
  EXPECT_EQ(json_string("caf\xc3\xa9 \"ok\""), "\"caf\xc3\xa9 \\\"ok\\\"\"");
}

TEST(Render, TextQuotesEvidenceAndColoursOnlyWhenAsked) {
  Diagnosis d = diagnose_text("x\nSegmentation fault (core dumped)\n");
  std::string plain = to_text(d, "run.log");
  EXPECT_NE(plain.find("run.log"), std::string::npos);
  EXPECT_NE(plain.find("segfault"), std::string::npos);
  EXPECT_NE(plain.find("line 2: Segmentation fault (core dumped)"), std::string::npos);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_NE(to_text(d, "run.log", TextStyle{true}).find("\x1b["), std::string::npos);
}

TEST(Render, JsonReadsBackToTheSameDiagnosis) {
  std::string log = "[rank1]: step 1 loss 2.5 grad_norm 1.2 lr 1e-4\n[rank1]: step 2 loss nan\n";
  log += "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
  for (const Diagnosis& d : {diagnose_text(log, -9), diagnose_text("", std::nullopt)}) {
    const std::string json = to_json(d, "a/b.log");
    const Diagnosis back = from_json(json);
    EXPECT_EQ(to_json(back), json);
    EXPECT_EQ(back.path, "a/b.log");
  }
  EXPECT_TRUE(std::isnan(from_json(to_json(diagnose_text(log, 1))).trajectory.first_non_finite->loss));
}

TEST(Render, JsonThatIsNoDiagnosisIsRejectedByName) {
  const std::string json = to_json(diagnose_text("Segmentation fault\n", 1));
  EXPECT_THROW(from_json("[1, 2"), std::invalid_argument);
  EXPECT_THROW(from_json("[]"), std::invalid_argument);
  std::string no_class = json;
  no_class.replace(no_class.find("\"class\":"), 8, "\"klass\":");
  try {
    from_json(no_class);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'class' is missing"), std::string::npos) << e.what();
  }
}

TEST(Render, BriefIsOneGrepLikeLine) {
  Diagnosis d = diagnose_text("loading\nModuleNotFoundError: No module named 'apex'\n", 1);
  EXPECT_EQ(to_brief(d, "run.log"), "run.log:2: missing_module (job, 0.75): ModuleNotFoundError: No module named 'apex'");
  EXPECT_EQ(to_brief(diagnose_text("", std::nullopt)), "<stdin>: unknown (none, 0.00)");
  const std::string brief = to_brief(diagnose_text("Segmentation fault " + std::string(400, 'x') + "\n", 1), "r");
  EXPECT_EQ(brief.find('\n'), std::string::npos);
  EXPECT_LT(brief.size(), 220u);
  EXPECT_EQ(brief.substr(brief.size() - 3), "\u2026");
}

// A launcher summary's fields are the log's bytes: a field of invalid UTF-8
// (a NUL, 0xFE 0xFF) comes out valid, in the struct and in the JSON, which
// reads back to the same. Found by fuzz_diagnose's round trip.
TEST(Render, JsonIsValidUtf8WhateverTheLogHolds) {
  const std::string log = std::string("Failures:\n[1]:\n  time      : 2026-11-ta\0\0\xfe\xff\xff\xbfw2\n", 48) +
                          "  host      : gpu-\xff" + "01\n  rank      : 3 (local_rank: 1)\n  exitcode  : -9 (pid: 7)\n";
  const Diagnosis d = diagnose_text(log, std::nullopt);
  ASSERT_TRUE(d.launcher);
  const FailedWorker& w = d.launcher->root_cause ? *d.launcher->root_cause : d.launcher->other_failures.at(0);
  EXPECT_EQ(w.rank, 3);
  EXPECT_TRUE(simdjson::validate_utf8(w.time.data(), w.time.size())) << w.time;
  EXPECT_TRUE(simdjson::validate_utf8(w.host.data(), w.host.size())) << w.host;
  Diagnosis raw = d;
  raw.path = "logs/run-\xfe.log";  // a file name of raw bytes
  const std::string json = to_json(raw);
  EXPECT_TRUE(simdjson::validate_utf8(json.data(), json.size()));
  EXPECT_EQ(to_json(from_json(json)), json);
}
