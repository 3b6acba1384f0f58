#include "server/scheduler/scaling_views.h"

namespace wsched::scheduler {

pipeline::WorkspaceViews::ScalingViews ScalingViewsOf(const std::vector<scaling::PoolSignal>& signals) {
  pipeline::WorkspaceViews::ScalingViews views;
  for (const scaling::PoolSignal& signal : signals) {
    placement::PoolScalingView& view = views[signal.pool];
    view.has_signal = true;
    view.current_size = signal.current_size;
    view.target_size = signal.target_size;
    if (signal.backoff_until) {
      view.backoff_until = *signal.backoff_until;
      view.backoff_detail = signal.detail;
    }
  }
  return views;
}

}  // namespace wsched::scheduler
