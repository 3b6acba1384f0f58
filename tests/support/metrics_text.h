// Reading a Prometheus text exposition in tests.
#ifndef WSCHED_TESTS_SUPPORT_METRICS_TEXT_H_
#define WSCHED_TESTS_SUPPORT_METRICS_TEXT_H_

#include <optional>
#include <string>
#include <vector>

namespace wsched::testing {

// The value of the first sample of `name` whose labels contain every one of
// `labels` (each like `pool="gpu-h100"`), or nullopt.
std::optional<double> MetricValue(const std::string& text, const std::string& name,
                                  const std::vector<std::string>& labels);

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_METRICS_TEXT_H_
