#include "server/core/mig_validation.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace wsched::core {
namespace {

bool IsProfileName(const std::string& name) {
  // "1g.18gb", "1g.18gb+me", "7g.141gb": printable, bounded, no spaces.
  return IsBoundedText(name, 64) && !name.empty() && name.find(' ') == std::string::npos;
}

void CheckProfile(ErrorList& errors, const std::string& at, const MigProfile& profile) {
  if (!IsProfileName(profile.name)) {
    errors.Add(at + ".name", "must be 1-64 printable characters without spaces");
  }
  if (profile.id < 0) errors.Add(at + ".id", absl::StrCat("must be >= 0, got ", profile.id));
  if (profile.compute_slices < 1 || profile.compute_slices > kMigComputeSlices) {
    errors.Add(at + ".compute_slices",
               absl::StrCat("must be 1..", kMigComputeSlices, ", got ", profile.compute_slices));
  }
  if (profile.memory_bytes < 0) errors.Add(at + ".memory_bytes", "must be >= 0");
  if (profile.size < 1 || profile.size > kMigMemorySlots) {
    errors.Add(at + ".size", absl::StrCat("must be 1..", kMigMemorySlots, ", got ", profile.size));
    return;
  }
  if (profile.starts.empty()) errors.Add(at + ".starts", "needs at least one placement start");
  for (size_t i = 0; i < profile.starts.size(); ++i) {
    int start = profile.starts[i];
    if (start < 0 || start + profile.size > kMigMemorySlots) {
      errors.Add(absl::StrCat(at, ".starts[", i, "]"),
                 absl::StrCat("start ", start, " with size ", profile.size, " leaves the ",
                              kMigMemorySlots, " memory slots"));
    } else if (i > 0 && start <= profile.starts[i - 1]) {
      errors.Add(absl::StrCat(at, ".starts[", i, "]"), "starts must be ascending and distinct");
    }
  }
}

const MigProfile* Named(const GpuMig& mig, const std::string& name) {
  auto it = std::find_if(mig.profiles.begin(), mig.profiles.end(),
                         [&](const MigProfile& p) { return p.name == name; });
  return it == mig.profiles.end() ? nullptr : &*it;
}

void CheckAccess(ErrorList& errors, const std::string& at, const std::optional<DeviceNode>& node) {
  if (!node) return;
  if (node->path.rfind("/dev/nvidia-caps/", 0) != 0 || !IsBoundedText(node->path, 128)) {
    errors.Add(at + ".path", "must be a path under /dev/nvidia-caps/");
  }
  if (node->type != 'c') errors.Add(at + ".type", "must be \"c\"");
  if (node->major < 0 || node->minor < 0) errors.Add(at, "major and minor must be >= 0");
}

// Whether a slice's placement is legal: one of its profile's, or, on a GPU
// whose agent could not read the profiles (`mig -lgip` failed: the slices
// are reported without them), at least inside the 8 slots. Empty when it is.
std::string PlacementProblem(const GpuMig& mig, const MigInstance& slice) {
  const std::string placement = absl::StrCat("placement ", slice.start, ":", slice.size);
  if (mig.profiles.empty()) {
    if (slice.start >= 0 && slice.size >= 1 && slice.start + slice.size <= kMigMemorySlots) {
      return "";
    }
    return absl::StrCat(placement, " is not within the ", kMigMemorySlots, " memory slots");
  }
  const MigProfile* profile = Named(mig, slice.profile);
  if (profile == nullptr) return "";  // Reported on the profile field.
  if (slice.size == profile->size && std::find(profile->starts.begin(), profile->starts.end(),
                                               slice.start) != profile->starts.end()) {
    return "";
  }
  return absl::StrCat(placement, " is not a legal placement of ", profile->name);
}

// A slice must be a legal placement of a profile the GPU has, and slices
// must not overlap: placement hands out what the agent says exists.
void CheckInstances(ErrorList& errors, const std::string& at, const GpuMig& mig) {
  unsigned used = 0;
  std::set<int> gpu_instances;
  for (size_t i = 0; i < mig.instances.size() && i < kMaxMigInstances; ++i) {
    const MigInstance& slice = mig.instances[i];
    const std::string slice_at = absl::StrCat(at, ".instances[", i, "]");
    if (!mig.profiles.empty() && Named(mig, slice.profile) == nullptr) {
      errors.Add(slice_at + ".profile", absl::StrCat("\"", slice.profile.substr(0, 64),
                                                     "\" is not one of the GPU's profiles"));
      continue;
    }
    if (std::string problem = PlacementProblem(mig, slice); !problem.empty()) {
      errors.Add(slice_at, problem);
      continue;
    }
    unsigned mask = ((1u << slice.size) - 1) << slice.start;
    if (used & mask) {
      errors.Add(slice_at, absl::StrCat("placement ", slice.start, ":", slice.size,
                                        " overlaps another slice"));
    }
    used |= mask;
    if (slice.gpu_instance < 0 || !gpu_instances.insert(slice.gpu_instance).second) {
      errors.Add(slice_at + ".gpu_instance", "must be >= 0 and distinct");
    }
    if (slice.compute_instance < -1) {
      errors.Add(slice_at + ".compute_instance", "must be >= 0, or -1 for none usable");
    }
    if (!slice.uuid.empty() &&
        (slice.uuid.rfind("MIG-", 0) != 0 || !IsBoundedText(slice.uuid, 128))) {
      errors.Add(slice_at + ".uuid", "must start with \"MIG-\" (at most 128 characters)");
    }
    CheckAccess(errors, slice_at + ".gi_access", slice.gi_access);
    CheckAccess(errors, slice_at + ".ci_access", slice.ci_access);
  }
}

}  // namespace

void CheckGpuMig(ErrorList& errors, const std::string& at, const GpuMig& mig) {
  const std::string mig_at = at + ".mig";
  if (mig.profiles.size() > kMaxMigProfiles) {
    errors.Add(mig_at + ".profiles", absl::StrCat("at most ", kMaxMigProfiles));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < mig.profiles.size() && i < kMaxMigProfiles; ++i) {
    const std::string profile_at = absl::StrCat(mig_at, ".profiles[", i, "]");
    CheckProfile(errors, profile_at, mig.profiles[i]);
    if (!names.insert(mig.profiles[i].name).second) {
      errors.Add(profile_at + ".name", absl::StrCat("duplicate profile ", mig.profiles[i].name));
    }
  }
  if (mig.instances.size() > kMaxMigInstances) {
    errors.Add(mig_at + ".instances", absl::StrCat("at most ", kMaxMigInstances));
  }
  if (!mig.enabled && !mig.instances.empty()) {
    errors.Add(mig_at + ".instances", "a GPU with MIG mode off has no slices");
  }
  CheckInstances(errors, mig_at, mig);
}

void CheckGpuLinks(ErrorList& errors, const std::string& at, const Gpu& gpu,
                   const std::set<int>& indices) {
  std::set<int> peers;
  for (size_t i = 0; i < gpu.links.size(); ++i) {
    const GpuLink& link = gpu.links[i];
    const std::string link_at = absl::StrCat(at, ".links[", i, "]");
    if (link.peer == gpu.index || !indices.contains(link.peer)) {
      errors.Add(link_at + ".peer",
                 absl::StrCat("must be the index of another GPU of the node, got ", link.peer));
    } else if (!peers.insert(link.peer).second) {
      errors.Add(link_at + ".peer", absl::StrCat("duplicate link to GPU ", link.peer));
    }
    bool nvlink = link.kind == GpuLinkKind::kNvlink;
    if (nvlink && (link.nvlinks < 1 || link.nvlinks > 64)) {
      errors.Add(link_at + ".nvlinks", "must be 1..64 for an NVLink link");
    } else if (!nvlink && link.nvlinks != 0) {
      errors.Add(link_at + ".nvlinks", "must be 0 unless the link is NVLink");
    }
  }
}

}  // namespace wsched::core
