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

TEST(Render, TextQuotesEvidenceAndColoursOnlyWhenAsked) {
  Diagnosis d = diagnose_text("x\nSegmentation fault (core dumped)\n");
  std::string plain = to_text(d, "run.log");
  EXPECT_NE(plain.find("run.log"), std::string::npos);
  EXPECT_NE(plain.find("segfault"), std::string::npos);
  EXPECT_NE(plain.find("line 2: Segmentation fault (core dumped)"), std::string::npos);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_NE(to_text(d, "run.log", TextStyle{true}).find("\x1b["), std::string::npos);
}
