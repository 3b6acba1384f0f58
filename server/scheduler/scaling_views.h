// The scaler's published signals as pending reasons read them.
#ifndef WSCHED_SERVER_SCHEDULER_SCALING_VIEWS_H_
#define WSCHED_SERVER_SCHEDULER_SCALING_VIEWS_H_

#include <vector>

#include "server/scheduler/scheduler.h"
#include "wsched/v1/scaling.pb.h"

namespace wsched::scheduler {

// By pool. A signal whose reasons include PROVISIONING_FAILED with a
// backoff_until sets the backoff; target above current is a requested
// scale-up.
Scheduler::ScalingViews ScalingViewsOf(const std::vector<v1::PoolSignal>& signals);

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_SCALING_VIEWS_H_
