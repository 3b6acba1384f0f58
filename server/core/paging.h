// List paging, the usual Google API way: page_size, an opaque page_token,
// next_page_token. The token carries the last key of the page it ends and
// the filters it was issued for, so the next page starts strictly after that
// key (keyset paging: no item is skipped or repeated when others are added or
// removed meanwhile) and a token reused with other filters is refused.
#ifndef WSCHED_SERVER_CORE_PAGING_H_
#define WSCHED_SERVER_CORE_PAGING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wsched::core {

inline constexpr int kDefaultPageSize = 100;
inline constexpr int kMaxPageSize = 1000;

struct PageRequest {
  int size = kDefaultPageSize;
  // Items with a key greater than this; empty = from the first.
  std::string after;
  // The filters, as the token records them (see ReadPageRequest).
  std::string filter;
};

template <typename T>
struct Page {
  std::vector<T> items;
  std::string next_page_token;  // Empty on the last page.
};

// page_size: 0 = default, above the maximum = the maximum, negative = error.
// `filter` is the request's filters in a canonical form, e.g. "pool=gpu-h100".
// Errors name the field: "page_size: ..." or "page_token: ...".
absl::StatusOr<PageRequest> ReadPageRequest(int32_t page_size, absl::string_view page_token,
                                            absl::string_view filter);

// The token for the page after the one that ends with `last_key`.
std::string NextPageToken(const PageRequest& request, absl::string_view last_key);

// Trims `rows`, read with a limit of request.size + 1 in key order, to one
// page, and sets the token when there is more.
template <typename T, typename KeyFn>
Page<T> PageFromRows(std::vector<T> rows, const PageRequest& request, KeyFn key) {
  Page<T> page;
  if (static_cast<int>(rows.size()) > request.size) {
    rows.resize(request.size);
    page.next_page_token = NextPageToken(request, key(rows.back()));
  }
  page.items = std::move(rows);
  return page;
}

// One page of `items`, which are sorted by `key` ascending and unique.
template <typename T, typename KeyFn>
std::vector<T> PageOf(const std::vector<T>& items, const PageRequest& request, KeyFn key,
                      std::string* next_page_token) {
  std::vector<T> page;
  next_page_token->clear();
  for (const T& item : items) {
    if (!request.after.empty() && !(absl::string_view(key(item)) > request.after)) continue;
    if (static_cast<int>(page.size()) == request.size) {
      *next_page_token = NextPageToken(request, key(page.back()));
      break;
    }
    page.push_back(item);
  }
  return page;
}

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_PAGING_H_
