// Maps libpqxx exceptions to absl::Status once, so callers never see them.
#ifndef WSCHED_SERVER_STORE_PG_STATUS_H_
#define WSCHED_SERVER_STORE_PG_STATUS_H_

#include <exception>

#include "absl/status/status.h"

namespace wsched::store {

// Call inside a catch block: turns the in-flight exception into a Status.
// Broken connections -> UNAVAILABLE; unique/check violations -> ABORTED
// (a lost race the caller may retry); syntax and other SQL errors -> INTERNAL.
absl::Status StatusFromCurrentException(absl::string_view what_we_did);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_PG_STATUS_H_
