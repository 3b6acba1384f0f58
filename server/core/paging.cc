#include "server/core/paging.h"

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "server/core/error_reason.h"

namespace wsched::core {
namespace {

// Bumped if the layout changes, so old tokens get a clear error.
constexpr absl::string_view kTokenVersion = "p1";

absl::Status BadToken(absl::string_view why) {
  return InvalidFieldError(
      "page_token", absl::StrCat(why, "; pass the next_page_token of the previous page unchanged"));
}

}  // namespace

absl::StatusOr<PageRequest> ReadPageRequest(int32_t page_size, absl::string_view page_token,
                                            absl::string_view filter) {
  if (page_size < 0) {
    return InvalidFieldError(
        "page_size", absl::StrCat("must be >= 0 (0 = ", kDefaultPageSize, "), got ", page_size));
  }
  PageRequest request;
  request.size = page_size == 0 ? kDefaultPageSize : std::min(page_size, kMaxPageSize);
  request.filter = std::string(filter);
  if (page_token.empty()) return request;
  std::string raw;
  if (!absl::WebSafeBase64Unescape(page_token, &raw)) return BadToken("not a page token");
  // Layout: "p1:<filter length>:<filter><last key>".
  absl::string_view rest = raw;
  if (!absl::ConsumePrefix(&rest, kTokenVersion) || !absl::ConsumePrefix(&rest, ":")) {
    return BadToken("not a page token");
  }
  size_t colon = rest.find(':');
  size_t filter_length;
  if (colon == absl::string_view::npos ||
      !absl::SimpleAtoi(rest.substr(0, colon), &filter_length) ||
      filter_length > rest.size() - colon - 1) {
    return BadToken("not a page token");
  }
  rest.remove_prefix(colon + 1);
  if (rest.substr(0, filter_length) != filter) {
    return BadToken("it was issued for other filters");
  }
  request.after = std::string(rest.substr(filter_length));
  if (request.after.empty()) return BadToken("not a page token");
  return request;
}

std::string NextPageToken(const PageRequest& request, absl::string_view last_key) {
  return absl::WebSafeBase64Escape(absl::StrCat(kTokenVersion, ":", request.filter.size(), ":",
                                                request.filter, last_key));
}

}  // namespace wsched::core
