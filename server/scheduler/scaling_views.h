// The scaler's published signals as pending reasons read them.
#ifndef WSCHED_SERVER_SCHEDULER_SCALING_VIEWS_H_
#define WSCHED_SERVER_SCHEDULER_SCALING_VIEWS_H_

#include <vector>

#include "server/scaling/scaling_signal.h"
#include "server/pipeline/workspace_views.h"

namespace wsched::scheduler {

// By pool. A signal with a backoff_until sets the backoff (its detail says
// why); target above current is a requested scale-up.
pipeline::WorkspaceViews::ScalingViews ScalingViewsOf(const std::vector<scaling::PoolSignal>& signals);

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_SCALING_VIEWS_H_
