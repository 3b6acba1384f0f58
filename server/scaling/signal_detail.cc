#include "server/scaling/signal_detail.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace wsched::scaling {
namespace {

std::string Plural(int64_t n, const char* singular, const char* plural) {
  return absl::StrCat(n, " ", n == 1 ? singular : plural);
}

std::string Rfc3339Utc(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// "3 pending gpu-1x workspaces", or with several classes
// "4 pending workspaces (3 gpu-1x, 1 gpu-8x)".
std::string DescribePendingCount(const std::vector<PendingWorkspaces>& pending, int64_t* total) {
  std::map<std::string, int64_t> by_class;
  *total = 0;
  for (const PendingWorkspaces& p : pending) {
    if (p.count <= 0) continue;
    by_class[p.workspace_class.id] += p.count;
    *total += p.count;
  }
  const char* noun = *total == 1 ? "workspace" : "workspaces";
  if (by_class.size() == 1) {
    return absl::StrCat(*total, " pending ", by_class.begin()->first, " ", noun);
  }
  std::vector<std::string> parts;
  for (const auto& [id, count] : by_class) parts.push_back(absl::StrCat(count, " ", id));
  return absl::StrCat(*total, " pending ", noun, " (", absl::StrJoin(parts, ", "), ")");
}

void DescribePending(const DetailInputs& in, std::vector<std::string>& out) {
  int64_t total = 0;
  std::string count = DescribePendingCount(*in.pending, &total);
  if (total == 0) return;
  const PackingResult& packing = *in.packing;
  if (packing.new_nodes > 0) {
    std::string need = absl::StrCat(count, total == 1 ? " needs " : " need ",
                                    Plural(packing.new_nodes, "more node", "more nodes"));
    if (in.window_left) {
      absl::StrAppend(&need, " (asking after the batching window, ",
                      absl::FormatDuration(*in.window_left), " left)");
    }
    out.push_back(std::move(need));
  } else if (packing.placed_on_existing > 0) {
    out.push_back(absl::StrCat(count, " fit on ready or provisioning nodes"));
  }
  for (const auto& [class_id, n] : packing.never_fit) {
    out.push_back(absl::StrCat(n, " pending ", class_id, n == 1 ? " workspace" : " workspaces",
                               " can never fit a node of pool ", in.pool->id));
  }
}

// "warm buffer 2 (windows[0] mon-fri 08:00-18:00 Europe/Berlin)".
std::string DescribeWarmBuffer(const DetailInputs& in) {
  const core::WarmBuffer& buffer = in.pool->warm_buffer;
  std::string text = absl::StrCat("warm buffer ", in.warm_buffer);
  if (buffer.is_constant()) return text;
  if (in.warm_window) {
    absl::StrAppend(&text, " (", DescribeScheduleWindow(*in.warm_window,
                                                        buffer.windows[*in.warm_window].when,
                                                        buffer.time_zone),
                    ")");
  } else {
    absl::StrAppend(&text, " (outside every window)");
  }
  return text;
}

void DescribeLost(const DetailInputs& in, std::vector<std::string>& out) {
  for (const PoolNode* node : *in.lost_busy) {
    out.push_back(absl::StrCat("lost node ", node->name, " still holds ",
                               Plural(node->workspaces, "workspace", "workspaces"),
                               ": counted until stopped or moved; replace it"));
  }
}

void DescribeScheduleHold(const DetailInputs& in, std::vector<std::string>& out) {
  if (in.down.held_by_schedule == 0) return;
  const core::ScaleDownSchedule& schedule = in.pool->scale_down.schedule;
  const std::optional<size_t>& window = in.down.schedule.window;
  std::string why =
      window ? DescribeScheduleWindow(*window, schedule.windows[*window].when, schedule.time_zone)
             : "outside every window";
  out.push_back(absl::StrCat("scale-down not allowed now by scale_down.schedule (", why,
                             "); keeping ",
                             Plural(in.down.held_by_schedule, "idle node", "idle nodes")));
}

void DescribeScaleDown(const DetailInputs& in, std::vector<std::string>& out) {
  const core::NodePool& pool = *in.pool;
  for (const PoolNode* node : *in.failed) {
    out.push_back(absl::StrCat("removing node ", node->name, ": not ready within ",
                               absl::FormatDuration(pool.max_node_provision_time)));
  }
  for (const PoolNode* node : *in.lost) {
    out.push_back(absl::StrCat("removing lost node ", node->name));
  }
  if (!in.removed_idle.empty()) {
    out.push_back(absl::StrCat("removing idle ", in.removed_idle.size() == 1 ? "node " : "nodes ",
                               absl::StrJoin(in.removed_idle, ", "), " (empty for ",
                               absl::FormatDuration(pool.scale_down.unneeded), " or more)"));
  }
  if (in.down.not_idle_long_enough > 0) {
    out.push_back(absl::StrCat(Plural(in.down.not_idle_long_enough, "empty node", "empty nodes"),
                               " not idle for ", absl::FormatDuration(pool.scale_down.unneeded),
                               " yet"));
  }
  if (in.down.paused > 0) {
    out.push_back(absl::StrCat("scale-down waits until ", Rfc3339Utc(in.down.scale_down_after),
                               " (delay_after_add ",
                               absl::FormatDuration(pool.scale_down.delay_after_add), ")"));
  }
  DescribeScheduleHold(in, out);
}

void DescribeFailures(const DetailInputs& in, std::vector<std::string>& out) {
  if (in.timed_out_requested > 0) {
    out.push_back(absl::StrCat(Plural(in.timed_out_requested, "requested node", "requested nodes"),
                               " did not register within ",
                               absl::FormatDuration(in.pool->max_node_provision_time)));
  }
  if (!in.backoff_until) return;
  std::string backoff = absl::StrCat("backing off until ", Rfc3339Utc(*in.backoff_until), " after ",
                                     Plural(in.consecutive_failures, "failure", "failures"));
  if (!in.last_failure.empty()) absl::StrAppend(&backoff, " (last: ", in.last_failure, ")");
  if (in.held_back) absl::StrAppend(&backoff, "; not growing until then");
  out.push_back(std::move(backoff));
}

}  // namespace

std::string DescribeSignal(const DetailInputs& in) {
  std::vector<std::string> parts;
  DescribePending(in, parts);
  DescribeLost(in, parts);
  parts.push_back(DescribeWarmBuffer(in));
  if (in.demand < in.pool->min_size) {
    parts.push_back(absl::StrCat("raised to min_size ", in.pool->min_size));
  }
  if (in.unclamped > in.pool->max_size) {
    parts.push_back(absl::StrCat("capped at max_size ", in.pool->max_size, " (",
                                 in.packing->beyond_limit > 0 ? "more" : absl::StrCat(in.unclamped),
                                 " needed)"));
  }
  DescribeScaleDown(in, parts);
  DescribeFailures(in, parts);
  return absl::StrJoin(parts, "; ");
}

}  // namespace wsched::scaling
