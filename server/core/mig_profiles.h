// Built-in MIG profile tables of the GPU models wsched knows, for the places
// where no GPU has reported its own table yet: catalog validation and the
// simulator. A GPU's own report (GpuMig::profiles, from `nvidia-smi mig
// -lgip` and `-lgipp`) always wins over these.
//
// The placements (start, size) are NVIDIA's and the same on A100, H100 and
// H200: a 1g profile starts anywhere in 0..6 (never 7: slot 7 has no compute
// slice of its own), a 1g profile with two slots' memory and a 2g start on an
// even slot, a 3g at 0 or 4 and takes four slots, a 4g only at 0, a 7g takes
// all eight. Memory sizes are what `nvidia-smi mig -lgip` shows on recent
// drivers; they move by a few hundred MiB between driver branches, which is
// one more reason a GPU's own report wins.
#ifndef WSCHED_SERVER_CORE_MIG_PROFILES_H_
#define WSCHED_SERVER_CORE_MIG_PROFILES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/core/mig.h"
#include "server/core/workspace_class.h"

namespace wsched::core {

// The table for a GPU model as wsched sees it: the driver's name
// ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "NVIDIA H200 NVL") or a
// catalog's shorter one ("H100", "H200", "A100-80GB"). Case, an "NVIDIA"
// prefix, dashes and underscores do not matter. nullptr for models without
// MIG or without a table here, and for names that do not say which table:
// a bare "A100" (40GB and 80GB name their profiles differently), H100 NVL
// (94GB) and GH200, whose tables differ from the H100 80GB's. Tables live for
// the whole program.
const std::vector<MigProfile>* KnownMigProfiles(absl::string_view model);

// The profile named `name` ("3g.71gb"; an "MIG " prefix is ignored) in
// `profiles`, or nullptr.
const MigProfile* FindProfile(const std::vector<MigProfile>& profiles, absl::string_view name);

// The compute slices a profile name states ("3g.71gb" -> 3), or nullopt.
std::optional<int> ComputeSlicesOfName(const std::string& profile);

// The compute slices of an instance the GPU reports: its own table's
// figure, else what the profile's name states; nullopt when neither says.
std::optional<int> ComputeSlicesOf(const MigInstance& instance, const GpuMig& mig);

// What the org GPU quota counts of a placement of `cls`, at least, in
// sevenths of a GPU: 7 per GPU of a GPU class, the smallest share of a slice
// class's profiles (it may get a larger one), 0 for a CPU class.
int64_t LeastGpuSevenths(const WorkspaceClass& cls);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_MIG_PROFILES_H_
