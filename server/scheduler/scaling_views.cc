#include "server/scheduler/scaling_views.h"

#include <google/protobuf/util/time_util.h>

namespace wsched::scheduler {

Scheduler::ScalingViews ScalingViewsOf(const std::vector<v1::PoolSignal>& signals) {
  using google::protobuf::util::TimeUtil;
  Scheduler::ScalingViews views;
  for (const v1::PoolSignal& signal : signals) {
    placement::PoolScalingView& view = views[signal.pool()];
    view.has_signal = true;
    view.current_size = signal.current_size();
    view.target_size = signal.target_size();
    if (signal.has_backoff_until()) {
      view.backoff_until =
          absl::FromUnixMicros(TimeUtil::TimestampToMicroseconds(signal.backoff_until()));
      view.backoff_detail = signal.detail();
    }
  }
  return views;
}

}  // namespace wsched::scheduler
