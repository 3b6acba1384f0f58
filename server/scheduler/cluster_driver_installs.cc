#include "server/scheduler/cluster_driver_installs.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/driver_install.h"
#include "server/log/log.h"

namespace wsched::scheduler {
namespace {

scaling::DriverInstallJob JobOf(const inventory::DriverWork& work) {
  return {work.node_name, work.kernel_version, work.os_id, work.os_version, work.driver_version,
          work.installer_image};
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterDriverInstalls>> ClusterDriverInstalls::Create(
    inventory::NodeInventory* inventory, ClusterDriverInstallOptions options, core::Clock clock) {
  if (options.command.empty()) return std::unique_ptr<ClusterDriverInstalls>();
  std::unique_ptr<ClusterDriverInstalls> installs(new ClusterDriverInstalls(inventory));
  scaling::DriverInstallExecOptions exec;
  exec.command = std::move(options.command);
  exec.timeout = options.timeout;
  exec.driver_cache = std::move(options.driver_cache);
  exec.clock = std::move(clock);
  ClusterDriverInstalls* self = installs.get();
  exec.on_start = [self](const scaling::DriverInstallJob& job) {
    inventory::DriverInstallReport report;
    report.outcome = inventory::DriverInstallReport::Outcome::kStarted;
    self->Record(job, std::move(report));
  };
  exec.on_end = [self](const scaling::DriverInstallOutcome& outcome) {
    if (outcome.stopped) return;  // Not the installer's failure: the next leader runs it again.
    if (outcome.succeeded) {
      absl::MutexLock lock(&self->mu_);
      self->succeeded_[outcome.job.node] = outcome.job;
    }
    inventory::DriverInstallReport report;
    report.outcome = outcome.succeeded ? inventory::DriverInstallReport::Outcome::kSucceeded
                                       : inventory::DriverInstallReport::Outcome::kFailed;
    report.detail = outcome.succeeded ? outcome.job.driver_version : outcome.detail;
    report.log_tail = outcome.succeeded ? "" : outcome.log_tail;
    if (outcome.took > absl::ZeroDuration()) report.took = outcome.took;
    report.cache = outcome.cache;
    self->Record(outcome.job, std::move(report));
  };
  auto created = scaling::DriverInstallExec::Create(std::move(exec));
  if (!created.ok()) return created.status();
  installs->exec_ = std::move(*created);
  return installs;
}

ClusterDriverInstalls::ClusterDriverInstalls(inventory::NodeInventory* inventory) : inventory_(inventory) {}

ClusterDriverInstalls::~ClusterDriverInstalls() { Stop(); }

void ClusterDriverInstalls::Stop() {
  if (exec_) exec_->Stop();
}

absl::Status ClusterDriverInstalls::Step() {
  // No node read from the store unless the mirror shows work.
  if (!inventory_->AnyNodeNeedsDriverIn(core::DriverInstall::kCluster)) return absl::OkStatus();
  const std::shared_ptr<const core::Catalog> catalog = inventory_->Catalog();
  std::string token;
  do {
    auto page = core::ReadPageRequest(core::kMaxPageSize, token, "");
    if (!page.ok()) return page.status();
    auto work = inventory_->ListDriverWork(*page);
    if (!work.ok()) return work.status();
    for (const inventory::DriverWork& item : work->work) {
      const core::NodePool* pool = catalog->FindPool(item.pool);
      if (pool == nullptr || pool->driver_install != core::DriverInstall::kCluster) continue;
      const scaling::DriverInstallJob job = JobOf(item);
      {
        absl::MutexLock lock(&mu_);
        auto done = succeeded_.find(job.node);
        if (done != succeeded_.end() && done->second == job) continue;  // Its agent reports next.
      }
      if (absl::Status offered = exec_->Offer(job); !offered.ok()) return offered;
    }
    token = work->next_page_token;
  } while (!token.empty());
  return absl::OkStatus();
}

void ClusterDriverInstalls::Record(const scaling::DriverInstallJob& job,
                                   inventory::DriverInstallReport report) {
  report.node = job.node;
  report.kernel = job.kernel;
  auto recorded = inventory_->ReportDriverInstall(report);
  if (!recorded.ok()) {
    // A node that rebooted into another kernel meanwhile (STALE_KERNEL_REPORT)
    // or was removed: the next step offers what it needs now.
    log::Warning("cannot record a cluster driver install",
                 {{"node", job.node}, {"kernel", job.kernel},
                  {"error", std::string(recorded.status().message())}});
  }
}

}  // namespace wsched::scheduler
