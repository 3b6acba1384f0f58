#include "server/core/validation.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace wsched::core {
namespace {

bool IsLowerHex(char c) { return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f'); }

bool HexRun(absl::string_view text, size_t pos, size_t len) {
  if (pos + len > text.size()) return false;
  for (size_t i = pos; i < pos + len; ++i) {
    if (!IsLowerHex(text[i])) return false;
  }
  return true;
}

}  // namespace

bool IsDnsLabel(absl::string_view text) {
  if (text.empty() || text.size() > 63) return false;
  for (char c : text) {
    if (!(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-')) return false;
  }
  return text.front() != '-' && text.back() != '-';
}

bool IsDnsSubdomain(absl::string_view text) {
  if (text.empty() || text.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(text, '.')) {
    if (!IsDnsLabel(label)) return false;
  }
  return true;
}

bool IsPciAddress(absl::string_view text) {
  // dddd:bb:dd.f — function is 0-7.
  return text.size() == 12 && HexRun(text, 0, 4) && text[4] == ':' && HexRun(text, 5, 2) &&
         text[7] == ':' && HexRun(text, 8, 2) && text[10] == '.' && text[11] >= '0' &&
         text[11] <= '7';
}

bool IsBoundedText(absl::string_view text, size_t max_len) {
  if (text.size() > max_len) return false;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

void ErrorList::Add(absl::string_view path, absl::string_view message) {
  errors_.push_back(absl::StrCat(path, ": ", message));
}

std::string ErrorList::Joined() const { return absl::StrJoin(errors_, "\n"); }

}  // namespace wsched::core
