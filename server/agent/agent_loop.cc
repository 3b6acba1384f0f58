#include "server/agent/agent_loop.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/agent/agent_log.h"
#include "server/process/process_runner.h"
#include "server/agent/discovery_report.h"
#include "server/agent/nvidia_proc.h"
#include "server/agent/rooted_fs.h"
#include "server/core/vfio_binding.h"

namespace wsched::agent {
namespace {

// The server's bound on a reported health reason (request_validation.cc).
constexpr size_t kMaxHealthReason = 256;

}  // namespace

void StopSignal::Stop() {
  absl::MutexLock lock(&mutex_);
  stopped_ = true;
}

bool StopSignal::stopped() const {
  absl::MutexLock lock(&mutex_);
  return stopped_;
}

void StopSignal::Nudge() const {
  absl::MutexLock lock(&mutex_);
  nudged_ = true;
}

bool StopSignal::WaitFor(absl::Duration duration) const {
  absl::MutexLock lock(&mutex_);
  auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return stopped_ || nudged_; };
  mutex_.AwaitWithTimeout(absl::Condition(&woken), duration);
  nudged_ = false;
  return stopped_;
}

Agent::Agent(AgentOptions options, InventoryClient& client, const StopSignal& stop)
    : options_(std::move(options)),
      client_(client),
      auth_(options_.auth),
      stop_(stop),
      interval_(options_.heartbeat_interval),
      sampler_(options_.nvidia_smi),
      layout_reader_(options_.nvidia_smi),
      xids_(options_.xid_hold),
      driver_backoff_(options_.driver_install.initial_backoff, options_.driver_install.max_backoff) {
  DriverRunnerOptions install = options_.driver_install;
  if (install.log_dir.empty()) install.log_dir = options_.auth.state_dir;
  DriverInstaller::Runner runner = options_.driver_install_runner;
  if (!runner) runner = [](const process::Command& command) { return process::RunCommand(command); };
  installer_ = std::make_unique<DriverInstaller>(std::move(install), std::move(runner),
                                                 [this] { stop_.Nudge(); });
}

bool Agent::SampleNvidiaSmiOnce() {
  fresh_sample_.clear();
  if (options_.nvidia_smi.empty()) return true;
  const bool had_health_columns = sampler_.health_columns();
  absl::StatusOr<std::vector<GpuUsage>> sample = sampler_.Sample();
  if (had_health_columns && !sampler_.health_columns()) {
    Log("nvidia-smi does not know the ECC and row-remapping columns (old driver); "
        "GPU health comes from its GPU states and XIDs only");
  }
  if (sample.ok()) {
    fresh_sample_ = *sample;
    last_good_sample_ = KeepKnownIdentity(last_good_sample_, *sample);
    return true;
  }
  if (!absl::IsNotFound(sample.status())) {
    Log(absl::StrCat("nvidia-smi: ", sample.status().ToString()));
    return false;
  }
  if (!reported_missing_nvidia_smi_) {
    // Normal on nodes without a driver yet; say it once, not every cycle.
    Log(absl::StrCat(options_.nvidia_smi, " not found; no GPU usage will be reported"));
    reported_missing_nvidia_smi_ = true;
  }
  return true;  // Nothing to judge by: XIDs alone decide.
}

void Agent::ReadLayout() {
  NvidiaLayout fresh;
  // Without a driver, or while nvidia-smi fails, the MIG commands would only
  // fail (or hang) too; known MIG modes are kept meanwhile.
  absl::StatusOr<std::string> driver = ReadDriverVersion(RootedFs(options_.discovery.root));
  if (!fresh_sample_.empty() && driver.ok() && !driver->empty()) fresh = layout_reader_.Read();
  std::vector<std::string> problems = fresh.problems;
  layout_ = KeepKnownMigModes(layout_, std::move(fresh));
  if (problems != layout_problems_) {
    Log(problems.empty() ? "nvidia-smi: MIG layout and GPU links read"
                         : absl::StrCat("nvidia-smi: ", absl::StrJoin(problems, "; "),
                                        "; those parts are reported empty"));
    layout_problems_ = std::move(problems);
  }
}

void Agent::ReadXids() {
  if (options_.kernel_log.empty() || kernel_log_unreadable_) return;
  RootedFs fs(options_.discovery.root);
  if (kernel_log_ == nullptr) {
    absl::StatusOr<std::unique_ptr<KernelLogReader>> reader =
        KernelLogReader::Open(options_.kernel_log);
    if (!reader.ok()) {
      // Usually kernel.dmesg_restrict=1 for an unprivileged agent; docs/agent.md.
      Log(absl::StrCat("cannot read XIDs from ", options_.kernel_log, ": ",
                       reader.status().ToString(), "; GPU health comes from nvidia-smi only"));
      kernel_log_unreadable_ = true;
      return;
    }
    kernel_log_ = *std::move(reader);
  }
  absl::StatusOr<std::vector<std::string>> lines = kernel_log_->ReadNew();
  if (!lines.ok()) {
    Log(absl::StrCat("kernel log: ", lines.status().ToString()));
    return;
  }
  absl::StatusOr<std::string> uptime_text = fs.ReadFile("/proc/uptime");
  std::optional<absl::Duration> uptime =
      uptime_text.ok() ? ParseUptime(*uptime_text) : std::nullopt;
  const absl::Time now = absl::Now();
  for (const std::string& line : *lines) {
    std::optional<XidEvent> event = ParseXidLine(line);
    if (!event) continue;
    const XidRule* rule = xids_.Add(*event, now, uptime);
    Log(absl::StrCat("XID ", event->xid, " on GPU ", event->pci_address, ": ",
                     rule == nullptr   ? "no rule; health unchanged"
                     : rule->unhealthy ? absl::StrCat(rule->meaning, "; GPU unhealthy")
                                       : absl::StrCat(rule->meaning, "; GPU stays healthy")));
  }
}

void Agent::BindVfio() {
  vfio_groups_.clear();
  if (options_.gpu_binding != core::GpuBinding::kVfio) return;
  RootedFs fs(options_.discovery.root);
  RootedSysfsWriter rooted(options_.discovery.root);
  SysfsWriter& writer = options_.sysfs_writer ? *options_.sysfs_writer : rooted;
  absl::StatusOr<std::vector<GroupBinding>> groups = BindGpuGroupsToVfio(fs, writer);
  std::vector<std::string> problems;
  if (!groups.ok()) {
    problems.push_back(std::string(groups.status().message()));
  } else {
    vfio_groups_ = *std::move(groups);
    for (const GroupBinding& group : vfio_groups_) {
      if (!group.writes.empty()) {
        Log(absl::StrCat("VFIO: bound IOMMU group ", group.group, " (GPU ",
                         absl::StrJoin(group.gpus, ", "), ") with ", group.writes.size(),
                         " sysfs writes"));
      }
      if (!group.problem.empty()) problems.push_back(group.problem);
    }
  }
  if (problems != vfio_problems_) {
    Log(problems.empty() ? "VFIO: every GPU's IOMMU group is bound to vfio-pci"
                         : absl::StrCat("VFIO: ", absl::StrJoin(problems, "; ")));
    vfio_problems_ = std::move(problems);
  }
}

void Agent::JudgeVfio(const core::NodeInfo& node) {
  for (const GroupBinding& group : vfio_groups_) {
    if (!group.device_missing) continue;
    for (const core::Gpu& gpu : node.gpus) {
      if (std::find(group.gpus.begin(), group.gpus.end(), gpu.pci_address) == group.gpus.end()) {
        continue;
      }
      // A member still on another driver is the truer reason, and the
      // server names it from the reported drivers: only a group wholly on
      // vfio-pci without its device node is a broken GPU.
      if (core::VmBindingProblem(gpu)) continue;
      verdicts_[gpu.uuid] = {.healthy = false,
                             .reason = absl::StrCat("VFIO: ", group.problem).substr(0, kMaxHealthReason)};
    }
  }
}

absl::StatusOr<core::NodeInfo> Agent::Discover() {
  const bool sampled = SampleNvidiaSmiOnce();
  ReadLayout();
  ReadXids();
  BindVfio();
  DiscoveryOptions discovery = options_.discovery;
  discovery.nvidia_smi = last_good_sample_;
  discovery.nvidia_layout = layout_;
  absl::StatusOr<core::NodeInfo> node = DiscoverNode(discovery);
  if (!node.ok()) {
    return absl::Status(node.status().code(),
                        absl::StrCat("discovery under ", discovery.root, ": ",
                                     node.status().message()));
  }
  verdicts_ = JudgeGpus(*node, sampled ? &fresh_sample_ : nullptr, xids_.Unhealthy(absl::Now()));
  JudgeVfio(*node);
  JudgeRelayouts();
  DescribeCdi(*node);
  return node;
}

void Agent::DescribeCdi(core::NodeInfo& node) {
  if (options_.cdi.spec_dir.empty()) return;
  NodeCdiPlan plan = PlanNodeCdi(RootedFs(options_.discovery.root), node, options_.cdi);
  if (absl::Status status = SyncSpecFiles(options_.cdi.spec_dir, plan); !status.ok()) {
    // Names that point at a file the runtime cannot read would fail every
    // container: hand nothing out until the directory is writable again.
    std::string problem = absl::StrCat("CDI spec not written: ", status.message());
    plan.cdi.problems.push_back(problem);
    WithholdAll(node, problem, plan);
  }
  ApplyNodeCdi(plan, node);
  for (const auto& [uuid, problem] : plan.gpu_problems) {
    verdicts_[uuid] = {.healthy = false, .reason = problem.substr(0, kMaxHealthReason)};
  }
  if (node.cdi.problems != cdi_problems_) {
    Log(node.cdi.problems.empty()
            ? absl::StrCat("CDI spec in ", options_.cdi.spec_dir, " (", core::CdiModeName(node.cdi.mode),
                           " mode) describes every GPU")
            : absl::StrCat("CDI: ", absl::StrJoin(node.cdi.problems, "; ")));
    cdi_problems_ = node.cdi.problems;
  }
}

absl::Status Agent::Register(const core::NodeInfo& node) {
  if (options_.on_register) options_.on_register(node);
  wsched::v1::RegisterNodeRequest request;
  *request.mutable_node() = NodeInfoToProto(node);
  ApplyVerdicts(verdicts_, *request.mutable_node());
  absl::StatusOr<wsched::v1::RegisterNodeResponse> response = auth_.Register(client_, request);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat("RegisterNode: ", response.status().message()));
  }
  if (response->has_heartbeat_interval()) {
    const auto& d = response->heartbeat_interval();
    interval_ = absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
  } else {
    // Servers before the Duration field send only the seconds.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    if (response->heartbeat_interval_seconds() > 0) {
      interval_ = absl::Seconds(response->heartbeat_interval_seconds());
    }
#pragma GCC diagnostic pop
  }
  registered_ = node;
  TakeDriverWork(response->has_driver_work(), response->driver_work());
  TakeMigWork(response->has_mig_work(), response->mig_work());
  Log(absl::StrCat("registered node ", node.name, " in pool ", node.pool, " with ",
                   node.gpus.size(), " GPU(s); heartbeat every ", absl::FormatDuration(interval_)));
  return absl::OkStatus();
}

absl::Status Agent::Heartbeat(const core::NodeInfo& node) {
  absl::StatusOr<wsched::v1::HeartbeatResponse> response =
      client_.Heartbeat(MakeHeartbeat(node, fresh_sample_, &verdicts_), auth_.bearer());
  // NotFound: the server has no such node (e.g. an operator removed it).
  if (absl::IsNotFound(response.status()) || (response.ok() && response->reregister())) {
    Log(absl::StrCat("server asked node ", node.name, " to register again"));
    registered_.reset();
    return absl::OkStatus();
  }
  if (absl::IsUnauthenticated(response.status())) {
    // A revoked or rotated node token: registration reads the state
    // directory again (an installed new token) and may bootstrap.
    registered_.reset();
  }
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat("Heartbeat: ", response.status().message()));
  }
  TakeDriverWork(response->has_driver_work(), response->driver_work());
  TakeMigWork(response->has_mig_work(), response->mig_work());
  return absl::OkStatus();
}

void Agent::TakeDriverWork(bool has_work, const wsched::v1::DriverWork& work) {
  if (!has_work) {
    driver_job_.reset();
    return;
  }
  DriverJob job{work.node_name(),      work.kernel_version(), work.os_id(),
                work.os_version(),     work.driver_version(), work.installer_image()};
  if (driver_job_ != job) {
    Log(absl::StrCat("driver install handed out: driver ", job.driver_version, " for kernel ",
                     job.kernel, " with ", job.image));
  }
  driver_job_ = std::move(job);
}

void Agent::TakeMigWork(bool has_work, const wsched::v1::MigWork& work) {
  if (!has_work) {
    // The server dropped or finished it: the same order given again later
    // (the GPU back in service) is carried out again.
    mig_job_.reset();
    mig_job_done_.reset();
    return;
  }
  MigJob job{work.gpu_index(), work.gpu_uuid(), {}, work.for_profile()};
  for (const wsched::v1::MigSlicePlacement& slice : work.slices()) {
    job.slices.push_back({slice.profile(), slice.start()});
  }
  mig_job_ = std::move(job);
}

bool Agent::DriveMigWork() {
  if (!mig_job_ || mig_job_ == mig_job_done_ || !registered_) return false;
  const MigJob job = *mig_job_;
  mig_job_done_ = job;
  const std::string what =
      absl::StrCat("MIG re-layout of GPU ", job.gpu_index, " (", job.gpu_uuid, ") to ",
                   absl::StrJoin(job.slices, ", ",
                                 [](std::string* out, const WantedSlice& s) {
                                   absl::StrAppend(out, s.profile, "@", s.start);
                                 }),
                   job.for_profile.empty() ? "" : absl::StrCat(" for ", job.for_profile));
  auto gpu = std::find_if(registered_->gpus.begin(), registered_->gpus.end(),
                          [&](const core::Gpu& g) { return g.index == job.gpu_index; });
  if (gpu == registered_->gpus.end() || gpu->uuid != job.gpu_uuid) {
    // Nothing to blame on a GPU of this node: said once, not acted on.
    Log(absl::StrCat(what, ": refused: this node has no GPU ", job.gpu_index, " with that UUID"));
    return false;
  }
  absl::Status status;
  if (job.slices.empty()) {
    status = absl::InvalidArgumentError("mig_work.slices: empty; a GPU is not left without slices");
  } else if (options_.nvidia_smi.empty()) {
    status = absl::FailedPreconditionError("the agent runs without nvidia-smi (--nvidia_smi)");
  } else {
    Log(absl::StrCat(what, ": starting"));
    status = RelayoutGpu({options_.nvidia_smi, gpu->pci_address, gpu->uuid}, job.slices,
                         options_.relayout_command_timeout);
  }
  if (status.ok()) {
    relayout_failures_.erase(job.gpu_uuid);
    Log(absl::StrCat(what, ": done; registering the new slices"));
  } else {
    Log(absl::StrCat(what, ": failed: ", status.ToString(), "; the GPU is reported unhealthy for ",
                     absl::FormatDuration(options_.relayout_failure_hold)));
    relayout_failures_[job.gpu_uuid] = {
        absl::StrCat("MIG re-layout failed: ", status.message()).substr(0, kMaxHealthReason),
        absl::Now() + options_.relayout_failure_hold};
  }
  return true;
}

void Agent::JudgeRelayouts() {
  const absl::Time now = absl::Now();
  for (auto it = relayout_failures_.begin(); it != relayout_failures_.end();) {
    if (it->second.until <= now) {
      it = relayout_failures_.erase(it);
      continue;
    }
    verdicts_[it->first] = {.healthy = false, .reason = it->second.reason};
    ++it;
  }
}

bool Agent::ReportInstall(wsched::v1::ReportDriverInstallRequest request) {
  absl::StatusOr<wsched::v1::Node> answer = client_.ReportDriverInstall(request, auth_.bearer());
  if (answer.ok()) return true;
  Log(absl::StrCat("ReportDriverInstall: ", answer.status().ToString()));
  return false;
}

void Agent::DriveDriverInstall() {
  if (!unreported_install_) unreported_install_ = installer_->TakeFinished();
  if (unreported_install_) {
    const auto& [job, outcome] = *unreported_install_;
    Log(absl::StrCat("driver install of ", job.driver_version, " for kernel ", job.kernel,
                     outcome.succeeded ? " succeeded" : " failed: ", outcome.succeeded ? "" : outcome.detail,
                     " in ", absl::FormatDuration(absl::Trunc(outcome.took, absl::Seconds(1))),
                     outcome.log_path.empty() ? "" : absl::StrCat("; log in ", outcome.log_path)));
    if (outcome.succeeded) {
      driver_backoff_.Succeeded(job);
    } else {
      absl::Time next = driver_backoff_.Failed(job, absl::Now());
      Log(absl::StrCat("driver install retried not before ", absl::FormatTime(next)));
    }
    wsched::v1::ReportDriverInstallRequest request;
    request.set_node_name(job.node);
    request.set_kernel_version(job.kernel);
    request.set_success(outcome.succeeded);
    request.set_outcome(outcome.succeeded ? wsched::v1::DRIVER_INSTALL_OUTCOME_SUCCEEDED
                                          : wsched::v1::DRIVER_INSTALL_OUTCOME_FAILED);
    request.set_detail(outcome.detail.substr(0, 1024));
    request.set_log_tail(outcome.log_tail);
    if (outcome.took > absl::ZeroDuration()) {
      request.mutable_duration()->set_seconds(absl::ToInt64Seconds(outcome.took));
      request.mutable_duration()->set_nanos(static_cast<int32_t>(
          absl::ToInt64Nanoseconds(outcome.took - absl::Seconds(absl::ToInt64Seconds(outcome.took)))));
    }
    request.set_cache(outcome.cache == core::DriverCache::kHit    ? wsched::v1::DRIVER_CACHE_HIT
                      : outcome.cache == core::DriverCache::kMiss ? wsched::v1::DRIVER_CACHE_MISS
                                                                  : wsched::v1::DRIVER_CACHE_UNSPECIFIED);
    // A refusal (a kernel the node no longer runs) will not change on a
    // retry: only an unreachable server keeps the report for the next cycle.
    absl::StatusOr<wsched::v1::Node> answer = client_.ReportDriverInstall(request, auth_.bearer());
    if (!answer.ok()) Log(absl::StrCat("ReportDriverInstall: ", answer.status().ToString()));
    if (answer.ok() || !absl::IsUnavailable(answer.status())) unreported_install_.reset();
    return;  // The next cycle rediscovers the node (a loaded driver) first.
  }
  if (!driver_job_ || installer_->running() || !driver_backoff_.Due(*driver_job_, absl::Now())) {
    return;
  }
  wsched::v1::ReportDriverInstallRequest started;
  started.set_node_name(driver_job_->node);
  started.set_kernel_version(driver_job_->kernel);
  started.set_outcome(wsched::v1::DRIVER_INSTALL_OUTCOME_STARTED);
  started.set_detail(absl::StrCat("installing ", driver_job_->driver_version, " with ", driver_job_->image));
  if (!ReportInstall(std::move(started))) return;
  Log(absl::StrCat("driver install started: ", driver_job_->image));
  installer_->Start(*driver_job_);
}

absl::Status Agent::RunOnce() {
  absl::StatusOr<core::NodeInfo> node = Discover();
  if (!node.ok()) return node.status();
  if (absl::Status status = Register(*node); !status.ok()) return status;
  return Heartbeat(*node);
}

absl::Duration Agent::Jittered(absl::Duration duration) {
  // +-20% so that a fleet of agents does not retry in lockstep after an outage.
  return duration * absl::Uniform(random_, 0.8, 1.2);
}

void Agent::Run() {
  absl::Duration backoff = options_.initial_backoff;
  while (!stop_.stopped()) {
    absl::Status status;
    bool registered_before = registered_.has_value();
    absl::StatusOr<core::NodeInfo> node = Discover();
    if (!node.ok()) {
      status = node.status();
    } else if (!registered_ || *registered_ != *node) {
      if (registered_) Log("node inventory changed; registering again");
      status = Register(*node);
    } else {
      status = Heartbeat(*node);
    }
    if (!status.ok()) {
      Log(absl::StrCat(status.ToString(), "; retrying in ~", absl::FormatDuration(backoff)));
      if (stop_.WaitFor(Jittered(backoff))) break;
      backoff = std::min(backoff * 2, options_.max_backoff);
      continue;
    }
    backoff = options_.initial_backoff;
    // The server forgot us: register again now, not a whole interval later.
    if (registered_before && !registered_) continue;
    if (registered_) DriveDriverInstall();
    if (DriveMigWork()) {
      // Its slices are new (or the GPU failed): the server hears of it now,
      // from a fresh discovery, not an interval later.
      registered_.reset();
      continue;
    }
    if (stop_.WaitFor(interval_)) break;
  }
  installer_->Cancel();  // Not reported: the next start of the agent runs it again.
  Log("stopping");
}

}  // namespace wsched::agent
