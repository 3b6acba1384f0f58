#include "server/cli/quote_table.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace wsched::cli {
namespace {

// "after_scale_up" for WHEN_AFTER_SCALE_UP.
std::string WhenText(v1::PlacementQuote::When when) {
  return absl::AsciiStrToLower(v1::PlacementQuote::When_Name(when).substr(5));
}

std::string OrDash(const std::string& text) { return text.empty() ? "-" : text; }

// "H100x8"; "H100 slice" for a MIG slice; "-" for a CPU pool.
std::string GpuText(const v1::PlacementQuote& q) {
  if (q.gpu_model().empty()) return "-";
  if (q.gpus() == 0) return absl::StrCat(q.gpu_model(), " slice");
  return absl::StrCat(q.gpu_model(), "x", q.gpus());
}

std::string EstimateText(const v1::PlacementQuote& q) {
  if (!q.has_estimate()) return "-";
  const absl::Duration d =
      absl::Seconds(q.estimate().seconds()) + absl::Nanoseconds(q.estimate().nanos());
  return absl::StrCat("~", absl::FormatDuration(absl::Trunc(d, absl::Seconds(1))));
}

std::string CreditsText(int64_t milli) {
  return absl::StrCat(milli / 1000, ".", absl::StrFormat("%03d", std::abs(milli % 1000)));
}

}  // namespace

std::vector<std::string> QuoteHeader() {
  return {"CLASS", "POOL", "GPU", "WHEN", "NODE", "ESTIMATE", "CREDITS/MIN", "QUOTA-AFTER"};
}

std::vector<std::string> QuoteRow(const v1::PlacementQuote& q) {
  const std::string quota = q.org_gpu_quota() < 0
                                ? "unlimited"
                                : absl::StrCat(q.org_gpus_after(), "/", q.org_gpu_quota());
  return {q.class_id(),
          q.pool(),
          GpuText(q),
          WhenText(q.when()),
          OrDash(q.node()),
          EstimateText(q),
          CreditsText(q.credits_per_minute_milli()),
          quota};
}

}  // namespace wsched::cli
