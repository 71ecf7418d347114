#include "extractor.hpp"

namespace gpudiag::detail {

std::map<std::string, std::string> extract_values(const std::vector<CompiledExtraction>& fields,
                                                  const std::string& line) {
  std::map<std::string, std::string> values;
  for (const auto& field : fields) {
    std::smatch m;
    if (std::regex_search(line, m, field.regex->get()) && m.size() > 1 && m[1].matched)
      values[field.name] = m[1].str();
  }
  return values;
}

}  // namespace gpudiag::detail
