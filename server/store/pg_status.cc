#include "server/store/pg_status.h"

#include <pqxx/pqxx>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"

namespace wsched::store {

absl::Status StatusFromCurrentException(absl::string_view what_we_did) {
  try {
    throw;
  } catch (const pqxx::broken_connection& e) {
    return core::DatabaseUnavailableError(
        absl::StrCat(what_we_did, ": database unreachable: ", e.what()));
  } catch (const pqxx::unique_violation& e) {
    return absl::AbortedError(absl::StrCat(what_we_did, ": conflicting concurrent change: ", e.what()));
  } catch (const pqxx::check_violation& e) {
    return absl::AbortedError(absl::StrCat(what_we_did, ": capacity guard refused: ", e.what()));
  } catch (const pqxx::deadlock_detected& e) {
    return absl::AbortedError(absl::StrCat(what_we_did, ": deadlock (retry): ", e.what()));
  } catch (const pqxx::serialization_failure& e) {
    return absl::AbortedError(absl::StrCat(what_we_did, ": serialization failure: ", e.what()));
  } catch (const pqxx::in_doubt_error& e) {
    return core::DatabaseUnavailableError(
        absl::StrCat(what_we_did, ": commit outcome unknown: ", e.what()));
  } catch (const pqxx::sql_error& e) {
    // A server shutting down or a connection failing, reported as the
    // answer to a statement (as in a pipeline) rather than as a broken
    // connection: SQLSTATE classes 57P (operator intervention) and 08.
    const std::string& state = e.sqlstate();
    // statement_timeout: the database did not finish within the call's
    // bound (a lock wait, an overloaded server); the same to a caller as
    // an unreachable one, and as worth retrying.
    if (state == "57014") {
      return core::DatabaseUnavailableError(
          absl::StrCat(what_we_did, ": statement ran past its bound: ", e.what()));
    }
    if (absl::StartsWith(state, "57P") || absl::StartsWith(state, "08")) {
      return core::DatabaseUnavailableError(
        absl::StrCat(what_we_did, ": database unreachable: ", e.what()));
    }
    return absl::InternalError(absl::StrCat(what_we_did, ": SQL error: ", e.what()));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(what_we_did, ": ", e.what()));
  }
}

absl::Status Prefixed(absl::string_view what, const absl::Status& status) {
  if (status.ok()) return status;
  absl::Status prefixed(status.code(), absl::StrCat(what, ": ", status.message()));
  // Every payload, not only the details this file knows of.
  status.ForEachPayload([&](absl::string_view type_url, const absl::Cord& payload) {
    prefixed.SetPayload(type_url, payload);
  });
  return prefixed;
}

}  // namespace wsched::store
