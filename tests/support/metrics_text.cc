#include "tests/support/metrics_text.h"

#include <sstream>

#include "absl/strings/match.h"

namespace wsched::testing {

std::optional<double> MetricValue(const std::string& text, const std::string& name,
                                  const std::vector<std::string>& labels) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // A series without labels: "name value".
    if (labels.empty() && absl::StartsWith(line, name + " ")) {
      return std::stod(line.substr(name.size() + 1));
    }
    if (!absl::StartsWith(line, name + "{")) continue;
    auto close = line.rfind('}');
    if (close == std::string::npos) continue;
    std::string label_text = line.substr(0, close + 1);
    bool all = true;
    for (const auto& label : labels) all = all && absl::StrContains(label_text, label);
    if (all) return std::stod(line.substr(close + 1));
  }
  return std::nullopt;
}

}  // namespace wsched::testing
