// The agent's life: discover, register, heartbeat; register again when the
// server forgets the node or the node's inventory changes; ride out server
// outages with backoff instead of exiting.
#ifndef WSCHED_SERVER_AGENT_AGENT_LOOP_H_
#define WSCHED_SERVER_AGENT_AGENT_LOOP_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/agent/agent_auth.h"
#include "server/agent/discovery.h"
#include "server/agent/driver_runner.h"
#include "server/agent/gpu_health_rules.h"
#include "server/agent/inventory_client.h"
#include "server/agent/mig_relayout.h"
#include "server/agent/node_cdi.h"
#include "server/agent/nvidia_layout.h"
#include "server/agent/nvidia_smi.h"
#include "server/agent/vfio_bind.h"
#include "server/agent/xid_events.h"
#include "server/core/node.h"
#include "server/core/pool.h"

namespace wsched::agent {

// Set once (by the signal thread) to end the loop; waits wake up at once.
// Nudge wakes the current (or next) wait early without stopping: a driver
// install that ended is reported at once, not an interval later.
class StopSignal {
 public:
  void Stop();
  bool stopped() const;
  void Nudge() const;
  // Sleeps up to `duration` or until nudged; true when stopped (now or
  // during the wait).
  bool WaitFor(absl::Duration duration) const;

 private:
  mutable absl::Mutex mutex_;
  bool stopped_ ABSL_GUARDED_BY(mutex_) = false;
  mutable bool nudged_ ABSL_GUARDED_BY(mutex_) = false;
};

struct AgentOptions {
  DiscoveryOptions discovery;
  // nvidia-smi to sample each cycle; empty: never sample.
  std::string nvidia_smi;
  // Kernel log to read XID events from, as a path on this machine (main.cc
  // resolves --kmsg below --root); empty: none.
  std::string kernel_log;
  // How long an unhealthy XID keeps its GPU reported unhealthy.
  absl::Duration xid_hold = absl::Minutes(5);
  // Used until the server's RegisterNode answer suggests another.
  absl::Duration heartbeat_interval = absl::Seconds(10);
  absl::Duration initial_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Minutes(1);
  // The node's CDI spec; spec_dir empty: off (answers carry the spec inline).
  CdiOptions cdi;
  // The credential of the calls, and bootstrap (agent_auth.h).
  AuthOptions auth;
  // The pool's gpu_binding (--gpu_binding): vfio binds every GPU's IOMMU
  // group to vfio-pci before each discovery (vfio_bind.h).
  core::GpuBinding gpu_binding = core::GpuBinding::kHost;
  // Where binding writes go; null: sysfs below discovery.root. Tests pass a
  // recorder that plays the kernel on a fake tree.
  std::shared_ptr<SysfsWriter> sysfs_writer;
  // Called with what is about to be registered (for --print).
  std::function<void(const core::NodeInfo&)> on_register;
  // How the agent runs the installs its answers hand it (a pool with
  // driver_install node; driver_runner.h). log_dir empty: the state dir.
  DriverRunnerOptions driver_install;
  // Runs the installer's command; null: process::RunCommand. Tests fake it.
  DriverInstaller::Runner driver_install_runner;
  // MIG re-layouts the server hands out (docs/agent.md "Re-laying out MIG
  // GPUs"): the bound on each nvidia-smi call, and how long a GPU whose
  // re-layout failed is reported unhealthy with the failure.
  absl::Duration relayout_command_timeout = absl::Seconds(30);
  absl::Duration relayout_failure_hold = absl::Minutes(5);
};

// A MIG re-layout as the server handed it out (wsched.v1.MigWork).
struct MigJob {
  int gpu_index = -1;
  std::string gpu_uuid;
  std::vector<WantedSlice> slices;
  std::string for_profile;
  friend bool operator==(const MigJob&, const MigJob&) = default;
};

class Agent {
 public:
  Agent(AgentOptions options, InventoryClient& client, const StopSignal& stop);
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Discover, register, send one heartbeat; the first error is returned.
  absl::Status RunOnce();
  // Until stopped. Errors are logged and retried with backoff.
  void Run();

 private:
  // Samples nvidia-smi (fresh usage, or empty), reads new XIDs, discovers
  // the node and judges its GPUs (verdicts_).
  absl::StatusOr<core::NodeInfo> Discover();
  // False when nvidia-smi failed this cycle (its verdicts are unknown).
  bool SampleNvidiaSmiOnce();
  // After a fresh sample, with the driver loaded: the GPUs' MIG layout and
  // links (layout_), keeping known MIG modes through failures; logs what
  // could not be read, once per change.
  void ReadLayout();
  void ReadXids();
  // Keeps the node's spec files in step and reports what they name; a GPU
  // they cannot describe is judged unhealthy with the reason.
  void DescribeCdi(core::NodeInfo& node);
  // In a vfio pool: binds the GPUs' groups to vfio-pci (before discovery,
  // which then reports the new drivers) and logs what it could not bind.
  void BindVfio();
  // A GPU whose group is wholly on vfio-pci but has no /dev/vfio/<group> is
  // judged unhealthy with the reason (no VM could open it).
  void JudgeVfio(const core::NodeInfo& node);
  absl::Status Register(const core::NodeInfo& node);
  // Sends a heartbeat; clears registered_ when the server asks to
  // re-register, or no longer knows the credential (registering again
  // goes through bootstrap where that applies).
  absl::Status Heartbeat(const core::NodeInfo& node);
  absl::Duration Jittered(absl::Duration duration);
  // The install job an answer handed out (or none: the node needs none).
  void TakeDriverWork(bool has_work, const wsched::v1::DriverWork& work);
  // Reports an ended install, or starts the handed-out one when it is due
  // (reporting its start first). Errors are logged: the next cycle retries.
  void DriveDriverInstall();
  // ReportDriverInstall with the agent's own credential; false on error.
  bool ReportInstall(wsched::v1::ReportDriverInstallRequest request);
  // The MIG re-layout an answer handed out (or none).
  void TakeMigWork(bool has_work, const wsched::v1::MigWork& work);
  // Carries out the handed-out re-layout unless it already did; true when
  // it ran (the node's slices changed, or a failure is to be reported), so
  // the loop registers again at once.
  bool DriveMigWork();
  // A GPU whose re-layout failed is unhealthy with the failure, for
  // relayout_failure_hold: the server drops the order on seeing it.
  void JudgeRelayouts();

  const AgentOptions options_;
  InventoryClient& client_;
  AgentAuth auth_;
  const StopSignal& stop_;
  absl::Duration interval_;
  // What the server last accepted; empty: must (re-)register.
  std::optional<core::NodeInfo> registered_;
  // Latest successful nvidia-smi sample, kept across failed samples so that a
  // flaky nvidia-smi does not make the inventory (GPU memory) flap.
  std::vector<GpuUsage> last_good_sample_;
  // This cycle's sample; empty when sampling failed (no stale usage is sent).
  std::vector<GpuUsage> fresh_sample_;
  bool reported_missing_nvidia_smi_ = false;
  NvidiaSmiSampler sampler_;
  NvidiaLayoutReader layout_reader_;
  NvidiaLayout layout_;                       // What discovery attaches this cycle.
  std::vector<std::string> layout_problems_;  // Last logged, like cdi_problems_.
  std::unique_ptr<KernelLogReader> kernel_log_;
  bool kernel_log_unreadable_ = false;  // Said once; XIDs are then not read.
  XidTracker xids_;
  // This cycle's health of the GPUs, by UUID (see JudgeGpus).
  std::map<std::string, GpuVerdict> verdicts_;
  std::vector<std::string> cdi_problems_;  // Last logged, so each change is logged once.
  std::vector<GroupBinding> vfio_groups_;  // This cycle's binding (vfio pools only).
  std::vector<std::string> vfio_problems_;  // Last logged, like cdi_problems_.
  absl::BitGen random_;  // Backoff jitter.
  std::optional<DriverJob> driver_job_;  // From the last answer.
  RetryBackoff driver_backoff_;
  // An ended install whose report has not reached the server yet.
  std::optional<std::pair<DriverJob, DriverInstallOutcome>> unreported_install_;
  // The re-layout of the last answer, and the last one carried out: the
  // server hands an order out until it sees the layout, and it runs once.
  std::optional<MigJob> mig_job_;
  std::optional<MigJob> mig_job_done_;
  struct RelayoutFailure {
    std::string reason;
    absl::Time until;
  };
  std::map<std::string, RelayoutFailure> relayout_failures_;  // By GPU UUID.
  std::unique_ptr<DriverInstaller> installer_;  // Last: its thread uses the rest.
};

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_AGENT_LOOP_H_
