// Maps libpqxx exceptions to absl::Status once, so callers never see them.
#ifndef WSCHED_SERVER_STORE_PG_STATUS_H_
#define WSCHED_SERVER_STORE_PG_STATUS_H_

#include <exception>

#include "absl/status/status.h"

namespace wsched::store {

// Call inside a catch block: turns the in-flight exception into a Status.
// Broken connections and statements cancelled by statement_timeout ->
// UNAVAILABLE (DATABASE_UNAVAILABLE, with RetryInfo); unique/check violations -> ABORTED
// (a lost race the caller may retry); syntax and other SQL errors -> INTERNAL.
absl::Status StatusFromCurrentException(absl::string_view what_we_did);

// `status` with "<what>: " before its message, its code and every payload
// (the details: reason, RetryInfo) kept: a caller during a failover must
// still be told DATABASE_UNAVAILABLE and when to retry, whatever layer adds
// context.
absl::Status Prefixed(absl::string_view what, const absl::Status& status);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_PG_STATUS_H_
