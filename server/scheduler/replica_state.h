// The FeedFollower's sink for a Scheduler (its in-memory state), and the
// NodeInventory's window on that state.
#ifndef WSCHED_SERVER_SCHEDULER_REPLICA_STATE_H_
#define WSCHED_SERVER_SCHEDULER_REPLICA_STATE_H_

#include "server/scheduler/scheduler.h"

namespace wsched::scheduler {

class Scheduler::StateSink : public FeedSink {
 public:
  explicit StateSink(Scheduler* scheduler) : scheduler_(scheduler) {}
  absl::Status Apply(const std::vector<store::ChangeRecord>& records) override {
    return scheduler_->ApplyRecords(records);
  }
  absl::StatusOr<int64_t> Reload() override { return scheduler_->ReloadState(); }

 private:
  Scheduler* const scheduler_;
};

// The inventory's window on the mirror (node_inventory.h).
class Scheduler::InventoryMirror : public NodeInventory::Mirror {
 public:
  explicit InventoryMirror(Scheduler* scheduler) : scheduler_(scheduler) {}
  std::shared_ptr<const core::Catalog> CurrentCatalog() const override {
    return scheduler_->CurrentCatalog();
  }
  std::shared_ptr<const ClusterView> View() const override { return scheduler_->View(); }
  Node MirroredNode(const std::string& name) const override {
    return scheduler_->MirroredNode(name);
  }
  absl::Status CatchUp() override { return scheduler_->CatchUp(); }
  void DrainEverything() override { scheduler_->KickDrain(); }
  void DrainPool(const std::string& pool) override { scheduler_->DrainPool(pool); }

 private:
  Scheduler* const scheduler_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_REPLICA_STATE_H_
