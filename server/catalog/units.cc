#include "server/catalog/units.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/core/quantity.h"

namespace wsched::catalog {
namespace {

std::string Quoted(absl::string_view text) { return absl::StrCat("\"", text, "\""); }

bool AllDigits(absl::string_view text) {
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<int64_t> ParseCreditsMilli(absl::string_view text) {
  absl::string_view whole = text;
  absl::string_view fraction;
  const size_t dot = text.find('.');
  if (dot != absl::string_view::npos) {
    whole = text.substr(0, dot);
    fraction = text.substr(dot + 1);
  }
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(Quoted(text),
                     " is not a credit amount; use a decimal number >= 0 with at most 3 decimals"));
  };
  if (whole.empty() || !AllDigits(whole) || !AllDigits(fraction) ||
      (dot != absl::string_view::npos && fraction.empty())) {
    return bad();
  }
  if (fraction.size() > 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        Quoted(text), " has more than 3 decimals; credits are counted in thousandths"));
  }
  int64_t units = 0;
  if (!absl::SimpleAtoi(whole, &units) || units > std::numeric_limits<int64_t>::max() / 1000 - 1) {
    return bad();
  }
  std::string padded(fraction);
  padded.resize(3, '0');
  int64_t thousandths = 0;
  if (!absl::SimpleAtoi(padded, &thousandths)) return bad();
  return units * 1000 + thousandths;
}

std::string FormatCreditsMilli(int64_t milli) {
  const char* sign = milli < 0 ? "-" : "";
  const uint64_t magnitude =
      milli < 0 ? 0 - static_cast<uint64_t>(milli) : static_cast<uint64_t>(milli);
  std::string text = absl::StrCat(sign, magnitude / 1000);
  if (const uint64_t rest = magnitude % 1000; rest != 0) {
    std::string decimals = absl::StrFormat("%03d", rest);
    while (decimals.back() == '0') decimals.pop_back();
    absl::StrAppend(&text, ".", decimals);
  }
  return text;
}

absl::StatusOr<int64_t> ParseSizeWithUnit(absl::string_view text) {
  if (!text.empty() && AllDigits(text) && text.find_first_not_of('0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(Quoted(text), " has no unit; write e.g. \"",
                                                   text, "Gi\" or \"", text, "Mi\""));
  }
  return core::ParseBytes(text);
}

bool HasSizeText(int64_t bytes) { return bytes % 1000 == 0 || bytes % 1024 == 0; }

absl::StatusOr<absl::Duration> ParseCatalogDuration(absl::string_view text) {
  absl::Duration duration;
  if (!absl::ParseDuration(std::string(text), &duration)) {
    return absl::InvalidArgumentError(absl::StrCat(
        Quoted(text),
        " is not a duration; use a number with a unit, e.g. \"10m\", \"30s\", \"1h30m\""));
  }
  if (duration == absl::InfiniteDuration() || duration < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Quoted(text), " must be a finite duration >= 0"));
  }
  return duration;
}

std::string FormatCatalogDuration(absl::Duration duration) {
  return absl::FormatDuration(duration);
}

}  // namespace wsched::catalog
