#include "server/core/quantity.h"

#include <array>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"

namespace wsched::core {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct Suffix {
  absl::string_view text;
  int64_t factor;
};

constexpr std::array<Suffix, 8> kSizeSuffixes = {{
    {"Ki", int64_t{1} << 10},
    {"Mi", int64_t{1} << 20},
    {"Gi", int64_t{1} << 30},
    {"Ti", int64_t{1} << 40},
    {"k", 1000},
    {"M", 1000 * 1000},
    {"G", 1000 * 1000 * 1000},
    {"T", int64_t{1000} * 1000 * 1000 * 1000},
}};

// kSizeSuffixes split by kind, each smallest first.
constexpr absl::Span<const Suffix> kBinarySuffixes(kSizeSuffixes.data(), 4);
constexpr absl::Span<const Suffix> kDecimalSuffixes(kSizeSuffixes.data() + 4, 4);

// "16Gi": `bytes` with the largest of `suffixes` that divides it, if any does.
std::optional<std::string> WithLargestSuffix(int64_t bytes, absl::Span<const Suffix> suffixes) {
  if (bytes == 0) return std::nullopt;
  for (auto s = suffixes.rbegin(); s != suffixes.rend(); ++s) {
    if (bytes % s->factor == 0) return absl::StrCat(bytes / s->factor, s->text);
  }
  return std::nullopt;
}

// Splits "16Gi" into digits "16" and suffix "Gi".
std::pair<absl::string_view, absl::string_view> SplitNumber(absl::string_view text) {
  size_t i = 0;
  while (i < text.size() && (absl::ascii_isdigit(text[i]) || text[i] == '.')) ++i;
  return {text.substr(0, i), text.substr(i)};
}

std::string Quoted(absl::string_view text) { return absl::StrCat("\"", text, "\""); }

}  // namespace

absl::StatusOr<int64_t> ParseCpuMillis(absl::string_view text) {
  auto [number, suffix] = SplitNumber(text);
  if (number.empty() || (!suffix.empty() && suffix != "m")) {
    return absl::InvalidArgumentError(absl::StrCat(
        Quoted(text), " is not a CPU quantity; use cores (\"4\", \"1.5\") or millicores (\"500m\")"));
  }
  int64_t millis = 0;
  if (suffix == "m") {
    if (!absl::SimpleAtoi(number, &millis)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Quoted(text), " is not a CPU quantity; millicores must be a whole number"));
    }
  } else {
    absl::string_view whole = number;
    absl::string_view fraction;
    if (auto dot = number.find('.'); dot != absl::string_view::npos) {
      whole = number.substr(0, dot);
      fraction = number.substr(dot + 1);
    }
    int64_t cores = 0;
    if ((!whole.empty() && !absl::SimpleAtoi(whole, &cores)) || fraction.size() > 3 ||
        fraction.find('.') != absl::string_view::npos || cores > kMax / 1000) {
      return absl::InvalidArgumentError(absl::StrCat(
          Quoted(text), " is not a CPU quantity; at most 3 decimals (use \"1500m\" for 1.5 cores)"));
    }
    int64_t frac_millis = 0;
    if (!fraction.empty()) {
      std::string padded(fraction);
      padded.resize(3, '0');
      if (!absl::SimpleAtoi(padded, &frac_millis)) {
        return absl::InvalidArgumentError(absl::StrCat(Quoted(text), " is not a CPU quantity"));
      }
    }
    millis = cores * 1000 + frac_millis;
  }
  if (millis <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(Quoted(text), " must be > 0"));
  }
  return millis;
}

absl::StatusOr<int64_t> ParseBytes(absl::string_view text) {
  auto [number, suffix] = SplitNumber(text);
  int64_t value = 0;
  if (number.empty() || number.find('.') != absl::string_view::npos ||
      !absl::SimpleAtoi(number, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        Quoted(text), " is not a quantity; use a whole number with an optional suffix (\"16Gi\", \"500Mi\")"));
  }
  int64_t factor = 1;
  if (!suffix.empty()) {
    bool found = false;
    for (const Suffix& s : kSizeSuffixes) {
      if (s.text == suffix) {
        factor = s.factor;
        found = true;
      }
    }
    if (!found) {
      // "GB", "gb", "GiB", "g" are common slips for the binary suffixes.
      std::string hint;
      char unit = absl::ascii_toupper(suffix[0]);
      if (absl::string_view("KMGT").find(unit) != absl::string_view::npos) {
        hint = absl::StrCat("; did you mean ", number, unit == 'K' ? "Ki" : std::string(1, unit) + "i", "?");
      }
      return absl::InvalidArgumentError(absl::StrCat(Quoted(text), " is not a quantity", hint));
    }
  }
  if (value <= 0) return absl::InvalidArgumentError(absl::StrCat(Quoted(text), " must be > 0"));
  if (value > kMax / factor) return absl::InvalidArgumentError(absl::StrCat(Quoted(text), " is too large"));
  return value * factor;
}

std::string FormatCpuMillis(int64_t millis) {
  if (millis % 1000 == 0) return absl::StrCat(millis / 1000);
  return absl::StrCat(millis, "m");
}

std::string FormatBytes(int64_t bytes) {
  return WithLargestSuffix(bytes, kBinarySuffixes).value_or(absl::StrCat(bytes));
}

std::string FormatSize(int64_t bytes) {
  if (auto binary = WithLargestSuffix(bytes, kBinarySuffixes)) return *binary;
  return WithLargestSuffix(bytes, kDecimalSuffixes).value_or(absl::StrCat(bytes));
}

}  // namespace wsched::core
