// A pool's published scaling signal (documents.h).
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "server/store/documents/documents.h"
#include "server/store/documents/enums.h"
#include "server/store/documents/fields.h"

namespace wsched::store::documents {
namespace {

constexpr int kNoReason = -1;

// Version 1 names; SignalReason is in the same order, one place lower.
const EnumNames& ReasonNames() {
  using R = SignalReason;
  static const EnumNames names = {
      {"SCALING_REASON_UNSPECIFIED", kNoReason},
      {"SCALING_REASON_PENDING_WORKSPACES", static_cast<int>(R::kPendingWorkspaces)},
      {"SCALING_REASON_WARM_BUFFER", static_cast<int>(R::kWarmBuffer)},
      {"SCALING_REASON_IDLE_TIMEOUT", static_cast<int>(R::kIdleTimeout)},
      {"SCALING_REASON_MIN_SIZE", static_cast<int>(R::kMinSize)},
      {"SCALING_REASON_MAX_SIZE", static_cast<int>(R::kMaxSize)},
      {"SCALING_REASON_PROVISIONING_FAILED", static_cast<int>(R::kProvisioningFailed)},
      {"SCALING_REASON_STEADY", static_cast<int>(R::kSteady)}};
  return names;
}

}  // namespace

std::string EncodeSignal(const SignalRow& signal) {
  nlohmann::json reasons = nlohmann::json::array();
  for (SignalReason reason : signal.reasons) {
    reasons.push_back(NameOf(ReasonNames(), static_cast<int>(reason), 1));
  }
  nlohmann::json j = {{"pool", signal.pool},
                      {"generation", signal.generation},
                      {"current_size", signal.current_size},
                      {"target_size", signal.target_size},
                      {"nodes_to_remove", signal.nodes_to_remove},
                      {"lost_nodes", signal.lost_nodes},
                      {"reasons", reasons},
                      {"detail", signal.detail}};
  if (signal.backoff_until) j["backoff_until"] = Rfc3339(*signal.backoff_until);
  return j.dump();
}

absl::StatusOr<SignalRow> DecodeSignal(absl::string_view json, const Origin& origin) {
  Decoding decoding(origin);
  std::optional<nlohmann::json> parsed = decoding.Parse(json);
  if (!parsed) return decoding.status();
  Fields s(*parsed, decoding);
  SignalRow signal;
  signal.pool = s.String("pool");
  signal.generation = s.Int64("generation");
  signal.current_size = s.Int("current_size");
  signal.target_size = s.Int("target_size");
  signal.nodes_to_remove = s.Strings("nodes_to_remove");
  signal.lost_nodes = s.Strings("lost_nodes");
  if (const nlohmann::json* reasons = s.Raw("reasons"); reasons != nullptr) {
    if (!reasons->is_array()) decoding.Fail(s.PathOf("reasons"), "is not a list");
    for (size_t i = 0; reasons->is_array() && i < reasons->size(); ++i) {
      nlohmann::json one = {{"reason", (*reasons)[i]}};
      Fields item(one, decoding, absl::StrCat(s.PathOf("reasons"), "[", i, "]"));
      int reason = item.Enum("reason", ReasonNames(), kNoReason);
      if (reason != kNoReason) signal.reasons.push_back(static_cast<SignalReason>(reason));
    }
  }
  signal.detail = s.String("detail");
  signal.backoff_until = s.Time("backoff_until");
  if (!decoding.ok()) return decoding.status();
  return signal;
}

}  // namespace wsched::store::documents
