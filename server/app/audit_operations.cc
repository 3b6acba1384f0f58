#include "server/app/audit_operations.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/app/listing_filter.h"
#include "server/core/error_reason.h"
#include "server/log/log.h"
#include "server/store/audit_query.h"
#include "server/store/unit_of_work.h"

namespace wsched::app {
namespace {

store::AuditFilter FilterOf(const AuditQuery& query) {
  return store::AuditFilter{.principal = query.principal,
                            .object = query.object,
                            .since = query.since,
                            .before = query.before};
}

}  // namespace

absl::Status CheckAuditQuery(const AuditQuery& query) {
  if (query.since && query.before && *query.before <= *query.since) {
    return core::InvalidFieldError("end_time", "must be after start_time");
  }
  return absl::OkStatus();
}

std::string AuditListingFilter(const AuditQuery& query) {
  return absl::StrCat("principal=", query.principal, ";object=", query.object,
                      ";start=", TimeBoundText(query.since), ";end=", TimeBoundText(query.before));
}

void AuditOperations::Record(const core::AuditRecord& record) {
  absl::Status written = store::UnitOfWork::Run(*db_, "writing an audit record",
                                                [&](store::UnitOfWork& unit) -> absl::Status {
    unit.audit().Append(record);
    return absl::OkStatus();
  });
  if (!written.ok()) {
    log::Error("audit record not written",
               {{"principal", record.principal}, {"method", record.method},
                {"object", record.object}, {"code", record.code},
                {"error", std::string(written.message())}});
  }
}

absl::StatusOr<core::Page<core::AuditRecord>> AuditOperations::List(
    const AuditQuery& query, int page_size, const std::string& page_token) const {
  if (absl::Status checked = CheckAuditQuery(query); !checked.ok()) return checked;
  auto page = core::ReadPageRequest(page_size, page_token, AuditListingFilter(query));
  if (!page.ok()) return page.status();
  int64_t before_id = 0;
  if (!page->after.empty() && !absl::SimpleAtoi(page->after, &before_id)) {
    return core::InvalidFieldError("page_token", "is not a token of this listing");
  }
  const store::AuditFilter filter = FilterOf(query);
  std::vector<core::AuditRecord> rows;
  absl::Status read = store::UnitOfWork::Run(*db_, "listing audit records",
                                             [&](store::UnitOfWork& unit) -> absl::Status {
    rows = unit.audit().List(filter, before_id, page->size + 1);
    return absl::OkStatus();
  }, store::UnitOfWork::Mode::kSnapshot);
  if (!read.ok()) return read;
  // Newest first: the key that continues is the last (smallest) id.
  return core::PageFromRows(std::move(rows), *page,
                            [](const core::AuditRecord& r) { return absl::StrCat(r.id); });
}

}  // namespace wsched::app
