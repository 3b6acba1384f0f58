#include "server/agent/mig_relayout.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/agent/nvidia_layout.h"
#include "server/agent/nvidia_mig.h"
#include "server/agent/nvidia_smi.h"
#include "server/core/mig_profiles.h"

namespace wsched::agent {
namespace {

// A wanted slice checked against the GPU's table.
struct PlacedSlice {
  const core::MigProfile* profile = nullptr;
  int start = 0;
  size_t field = 0;  // Its position in the wanted layout, for errors.
};

std::string Field(size_t index) { return absl::StrCat("layout[", index, "]"); }

// "3g.71gb@4": a slice as errors name it.
std::string SliceName(absl::string_view profile, int start) {
  return absl::StrCat(profile, "@", start);
}

absl::Status CheckMode(const core::GpuMig& current) {
  if (!current.enabled) {
    return absl::FailedPreconditionError(
        current.pending_enabled ? "MIG mode is off until the GPU is reset (pending: enabled)"
                                : "MIG mode is off");
  }
  if (!current.pending_enabled) {
    return absl::FailedPreconditionError(
        "MIG mode is pending a change to disabled: GPU instances would go with the next reset");
  }
  return absl::OkStatus();
}

absl::StatusOr<PlacedSlice> Place(const std::vector<core::MigProfile>& table,
                                  const WantedSlice& slice, size_t index) {
  const core::MigProfile* profile = core::FindProfile(table, slice.profile);
  if (profile == nullptr) {
    std::vector<std::string> names;
    for (const core::MigProfile& known : table) names.push_back(known.name);
    return absl::InvalidArgumentError(absl::StrCat(Field(index), ".profile: \"", slice.profile,
                                                   "\" is not a profile of this GPU (it has ",
                                                   absl::StrJoin(names, ", "), ")"));
  }
  if (std::find(profile->starts.begin(), profile->starts.end(), slice.start) ==
      profile->starts.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Field(index), ".start: ", slice.start, " is not a start of ", profile->name,
                     " (it starts at ", absl::StrJoin(profile->starts, ", "), ")"));
  }
  if (slice.start < 0 || slice.start + profile->size > core::kMigMemorySlots) {
    return absl::InvalidArgumentError(absl::StrCat(Field(index), ": ", profile->name, " at ",
                                                   slice.start, " takes slots past the ",
                                                   core::kMigMemorySlots, " of a GPU"));
  }
  return PlacedSlice{.profile = profile, .start = slice.start, .field = index};
}

absl::Status CheckFits(const std::vector<PlacedSlice>& placed) {
  int slots = 0;
  int compute = 0;
  for (size_t i = 0; i < placed.size(); ++i) {
    const PlacedSlice& a = placed[i];
    for (size_t j = i + 1; j < placed.size(); ++j) {
      const PlacedSlice& b = placed[j];
      if (a.start < b.start + b.profile->size && b.start < a.start + a.profile->size) {
        return absl::InvalidArgumentError(
            absl::StrCat(Field(b.field), ": ", SliceName(b.profile->name, b.start), " overlaps ",
                         Field(a.field), " ", SliceName(a.profile->name, a.start), " (slots ",
                         b.start, "-", b.start + b.profile->size - 1, " and ", a.start, "-",
                         a.start + a.profile->size - 1, ")"));
      }
    }
    slots += a.profile->size;
    compute += a.profile->compute_slices;
  }
  if (slots > core::kMigMemorySlots) {
    return absl::InvalidArgumentError(
        absl::StrCat("layout: ", slots, " memory slots, a GPU has ", core::kMigMemorySlots));
  }
  if (compute > core::kMigComputeSlices) {
    return absl::InvalidArgumentError(
        absl::StrCat("layout: ", compute, " compute slices, a GPU has ", core::kMigComputeSlices));
  }
  return absl::OkStatus();
}

// Slices as (profile, start), ordered by start: what "the same layout" compares.
bool ByStart(const std::pair<std::string, int>& a, const std::pair<std::string, int>& b) {
  return std::tie(a.second, a.first) < std::tie(b.second, b.first);
}

std::vector<std::pair<std::string, int>> Sorted(std::vector<std::pair<std::string, int>> slices) {
  std::sort(slices.begin(), slices.end(), ByStart);
  return slices;
}

std::vector<std::pair<std::string, int>> CurrentSlices(const core::GpuMig& mig) {
  std::vector<std::pair<std::string, int>> slices;
  for (const core::MigInstance& instance : mig.instances) {
    slices.emplace_back(instance.profile, instance.start);
  }
  return Sorted(std::move(slices));
}

bool AllUsable(const core::GpuMig& mig) {
  return std::all_of(
      mig.instances.begin(), mig.instances.end(),
      [](const core::MigInstance& instance) { return instance.compute_instance >= 0; });
}

// What `actual` has that `wanted` lacks, and the other way round; and the
// slices without a spanning compute instance.
std::string Differences(const std::vector<std::pair<std::string, int>>& wanted,
                        const core::GpuMig& actual) {
  std::vector<std::pair<std::string, int>> have = CurrentSlices(actual);
  std::vector<std::pair<std::string, int>> missing;
  std::vector<std::pair<std::string, int>> unexpected;
  std::set_difference(wanted.begin(), wanted.end(), have.begin(), have.end(),
                      std::back_inserter(missing), ByStart);
  std::set_difference(have.begin(), have.end(), wanted.begin(), wanted.end(),
                      std::back_inserter(unexpected), ByStart);
  auto names = [](const std::vector<std::pair<std::string, int>>& slices) {
    return absl::StrJoin(slices, ", ", [](std::string* out, const auto& slice) {
      absl::StrAppend(out, SliceName(slice.first, slice.second));
    });
  };
  std::vector<std::string> parts;
  if (!missing.empty()) parts.push_back(absl::StrCat("missing ", names(missing)));
  if (!unexpected.empty()) parts.push_back(absl::StrCat("unexpected ", names(unexpected)));
  std::vector<std::pair<std::string, int>> unusable;
  for (const core::MigInstance& instance : actual.instances) {
    if (instance.compute_instance < 0) unusable.emplace_back(instance.profile, instance.start);
  }
  if (!unusable.empty()) {
    parts.push_back(absl::StrCat("without one spanning compute instance ", names(unusable)));
  }
  return absl::StrJoin(parts, "; ");
}

std::string CommandLine(const std::vector<std::string>& argv) { return absl::StrJoin(argv, " "); }

// nvidia-smi's answer to a destroy with nothing to destroy: a GPU instance
// without a compute instance makes `-dci` say so, and that is not a failure.
bool SaysNothingToDestroy(absl::string_view output) {
  return absl::StrContains(output, "No compute instances found") ||
         absl::StrContains(output, "No GPU instances found");
}

bool IsDestroy(const std::vector<std::string>& command) {
  return std::find(command.begin(), command.end(), "-dci") != command.end() ||
         std::find(command.begin(), command.end(), "-dgi") != command.end();
}

// A query's stdout when it exited 0.
absl::StatusOr<std::string> Query(const std::string& nvidia_smi, std::vector<std::string> args,
                                  absl::Duration timeout) {
  args.insert(args.begin(), nvidia_smi);
  absl::StatusOr<process::Result> result = RunNvidiaSmi(args, timeout, /*merge_stderr=*/false);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat(CommandLine(args), ": ", result.status().message()));
  }
  if (result->exit_code != 0) {
    std::string hint = FoldedOutput(result->err.text.empty() ? result->out.text : result->err.text);
    return absl::UnavailableError(absl::StrCat(CommandLine(args), " failed with ",
                                               process::DescribeExit(*result),
                                               hint.empty() ? "" : ": ", hint));
  }
  return std::move(result->out.text);
}

absl::StatusOr<int> NvidiaSmiIndex(const RelayoutTarget& target, absl::Duration timeout) {
  absl::StatusOr<std::string> csv =
      Query(target.nvidia_smi,
            {absl::StrCat("--query-gpu=", kMigModeQuery), "--format=csv,noheader"}, timeout);
  if (!csv.ok()) return csv.status();
  absl::StatusOr<std::vector<MigModeLine>> modes = ParseMigModeCsv(*csv);
  if (!modes.ok()) return modes.status();
  const std::string address = absl::AsciiStrToLower(target.pci_address);
  for (const MigModeLine& mode : *modes) {
    if (mode.pci_address == address) return mode.index;
  }
  return absl::NotFoundError(
      absl::StrCat("nvidia-smi does not list the GPU at ", target.pci_address));
}

// Refuses a GPU with a compute process: destroying its slices would kill it.
absl::Status CheckHoldsNothing(const RelayoutTarget& target, absl::Duration timeout) {
  absl::StatusOr<std::string> csv = Query(
      target.nvidia_smi, {"--query-compute-apps=gpu_uuid,pid", "--format=csv,noheader"}, timeout);
  if (!csv.ok()) return csv.status();
  std::vector<std::string> pids;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*csv, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "No running")) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    if (fields.size() != 2) {
      // Not knowing which GPU a process is on is not knowing the GPU is free.
      return absl::FailedPreconditionError(absl::StrCat(
          "nvidia-smi --query-compute-apps line ", line_number, ": \"", line,
          "\" is not gpu_uuid, pid; the GPU is not laid out without knowing it is idle"));
    }
    if (absl::StripAsciiWhitespace(fields[0]) == target.uuid) {
      pids.emplace_back(absl::StripAsciiWhitespace(fields[1]));
    }
  }
  if (!pids.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("GPU ", target.uuid, " runs compute processes (pid ",
                     absl::StrJoin(pids, ", "), "): only a GPU that holds nothing is laid out"));
  }
  return absl::OkStatus();
}

// The GPU's MIG state as discovery reads it; an error when the slices or the
// profiles could not be read, since a plan from half a picture could
// destroy the wrong thing or place into taken slots.
absl::StatusOr<core::GpuMig> ReadGpuMig(const RelayoutTarget& target, absl::Duration timeout) {
  NvidiaLayout layout = NvidiaLayoutReader(target.nvidia_smi, timeout).Read();
  for (const std::string& problem : layout.problems) {
    for (const char* prefix : {"MIG mode:", "MIG slices:", "MIG profiles:"}) {
      if (absl::StartsWith(problem, prefix)) {
        return absl::UnavailableError(
            absl::StrCat("reading the MIG state of ", target.pci_address, ": ", problem));
      }
    }
  }
  auto mig = layout.mig.find(absl::AsciiStrToLower(target.pci_address));
  if (mig == layout.mig.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("nvidia-smi gives the GPU at ", target.pci_address, " no MIG mode"));
  }
  return mig->second;
}

}  // namespace

absl::StatusOr<NvidiaSmiCommands> PlanRelayout(int gpu, const core::GpuMig& current,
                                               const std::vector<WantedSlice>& wanted) {
  if (gpu < 0) {
    return absl::InvalidArgumentError(absl::StrCat("gpu: ", gpu, " is not an nvidia-smi index"));
  }
  if (absl::Status mode = CheckMode(current); !mode.ok()) return mode;
  if (current.profiles.empty()) {
    return absl::InvalidArgumentError(
        "profiles: the GPU reported no MIG profile table (nvidia-smi mig -lgip), so no slice can "
        "be checked against it");
  }
  std::vector<PlacedSlice> placed;
  for (size_t i = 0; i < wanted.size(); ++i) {
    absl::StatusOr<PlacedSlice> slice = Place(current.profiles, wanted[i], i);
    if (!slice.ok()) return slice.status();
    placed.push_back(*slice);
  }
  if (absl::Status fits = CheckFits(placed); !fits.ok()) return fits;
  std::sort(placed.begin(), placed.end(),
            [](const PlacedSlice& a, const PlacedSlice& b) { return a.start < b.start; });

  std::vector<std::pair<std::string, int>> want;
  for (const PlacedSlice& slice : placed) want.emplace_back(slice.profile->name, slice.start);
  if (Sorted(want) == CurrentSlices(current) && AllUsable(current)) return NvidiaSmiCommands{};

  const std::string index = absl::StrCat(gpu);
  NvidiaSmiCommands commands;
  if (!current.instances.empty()) {
    commands.push_back({"mig", "-i", index, "-dci"});
    commands.push_back({"mig", "-i", index, "-dgi"});
  }
  for (const PlacedSlice& slice : placed) {
    commands.push_back(
        {"mig", "-i", index, "-cgi", absl::StrCat(slice.profile->id, ":", slice.start), "-C"});
  }
  return commands;
}

absl::Status RelayoutGpu(const RelayoutTarget& target, const std::vector<WantedSlice>& wanted,
                         absl::Duration timeout) {
  absl::StatusOr<int> index = NvidiaSmiIndex(target, timeout);
  if (!index.ok()) return index.status();
  if (absl::Status idle = CheckHoldsNothing(target, timeout); !idle.ok()) return idle;
  absl::StatusOr<core::GpuMig> before = ReadGpuMig(target, timeout);
  if (!before.ok()) return before.status();
  absl::StatusOr<NvidiaSmiCommands> plan = PlanRelayout(*index, *before, wanted);
  if (!plan.ok()) return plan.status();
  if (plan->empty()) return absl::OkStatus();

  for (size_t i = 0; i < plan->size(); ++i) {
    std::vector<std::string> argv = {target.nvidia_smi};
    argv.insert(argv.end(), (*plan)[i].begin(), (*plan)[i].end());
    const std::string where =
        absl::StrCat(" (command ", i + 1, " of ", plan->size(),
                     i == 0 ? "; nothing was changed)" : "; the GPU is left part way)");
    absl::StatusOr<process::Result> result = RunNvidiaSmi(argv, timeout, /*merge_stderr=*/true);
    if (!result.ok()) {
      return absl::UnavailableError(
          absl::StrCat(CommandLine(argv), ": ", result.status().message(), where));
    }
    if (result->exit_code == 0 ||
        (IsDestroy((*plan)[i]) && SaysNothingToDestroy(result->out.text))) {
      continue;
    }
    std::string output = FoldedOutput(result->out.text);
    return absl::UnavailableError(absl::StrCat(CommandLine(argv), " failed with ",
                                               process::DescribeExit(*result),
                                               output.empty() ? "" : ": ", output, where));
  }

  absl::StatusOr<core::GpuMig> after = ReadGpuMig(target, timeout);
  if (!after.ok()) return after.status();
  std::vector<std::pair<std::string, int>> want;
  for (const WantedSlice& slice : wanted) {
    want.emplace_back(core::FindProfile(before->profiles, slice.profile)->name, slice.start);
  }
  want = Sorted(std::move(want));
  if (CurrentSlices(*after) == want && AllUsable(*after)) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("after the re-layout the GPU at ", target.pci_address,
                                          " is not as asked: ", Differences(want, *after)));
}

}  // namespace wsched::agent
