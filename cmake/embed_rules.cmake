# Turns the shipped rule files into a C++ source so that the library carries
# its default rules and needs no install path to find them.
# Inputs: RULES_DIR, OUTPUT.
file(GLOB rule_files RELATIVE "${RULES_DIR}" "${RULES_DIR}/*.json")
list(SORT rule_files)
set(body "// Generated from rules/*.json by cmake/embed_rules.cmake.\n#include \"builtin_rules.hpp\"\n\nnamespace gpudiag::detail {\n\n")
set(entries "")
set(i 0)
foreach(name IN LISTS rule_files)
  file(READ "${RULES_DIR}/${name}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
  string(APPEND body "static const char rules_${i}[] = {${bytes} 0};\n")
  string(APPEND entries "    {\"builtin:rules/${name}\", std::string_view(rules_${i}, sizeof(rules_${i}) - 1)},\n")
  math(EXPR i "${i} + 1")
endforeach()
string(APPEND body "\nstd::vector<RuleSource> builtin_rule_sources() {\n  return {\n${entries}  };\n}\n\n}  // namespace gpudiag::detail\n")
file(WRITE "${OUTPUT}.tmp" "${body}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
