// The idle monitor's window on a Scheduler (idle_monitor.h): what the
// mirror knows of the workspaces it judges, and the guarded writes.
#ifndef WSCHED_SERVER_SCHEDULER_IDLE_ACTIONS_H_
#define WSCHED_SERVER_SCHEDULER_IDLE_ACTIONS_H_

#include "server/scheduler/scheduler.h"

namespace wsched::scheduler {

class Scheduler::IdleActions : public IdleMonitor::Actions {
 public:
  explicit IdleActions(Scheduler* scheduler) : scheduler_(scheduler) {}
  std::shared_ptr<const core::Catalog> Catalog() const override {
    return scheduler_->CurrentCatalog();
  }
  absl::flat_hash_map<std::string, Known> KnownOf(const std::vector<std::string>& ids) override;
  absl::StatusOr<int64_t> Mark(const std::string& workspace, int64_t version,
                               const std::optional<core::IdleMark>& mark) override;
  absl::Status StopIdle(const std::string& workspace, int64_t version) override {
    return scheduler_->StopIdleWorkspace(workspace, version);
  }

 private:
  Scheduler* const scheduler_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_IDLE_ACTIONS_H_
