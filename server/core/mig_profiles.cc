#include "server/core/mig_profiles.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wsched::core {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Profile names of one model, in the order every table lists them.
struct ProfileNames {
  const char* one_slice;         // 1g, one slot (ID 19)
  const char* one_slice_media;   // 1g with the media engines, one slot (ID 20)
  const char* one_slice_double;  // 1g with two slots' memory (ID 15)
  const char* two_slices;        // 2g (ID 14)
  const char* three_slices;      // 3g, four slots (ID 9)
  const char* four_slices;       // 4g (ID 5)
  const char* seven_slices;      // 7g, the whole GPU (ID 0)
};

// Memory of an instance by how many slots it takes, in MiB.
struct MemoryBySlots {
  int64_t one, two, four, eight;
};

std::vector<MigProfile> Table(const ProfileNames& names, const MemoryBySlots& mib) {
  const std::vector<int> any_but_last = {0, 1, 2, 3, 4, 5, 6};
  return {
      {names.one_slice, 19, 1, mib.one * kMiB, 1, any_but_last},
      {names.one_slice_media, 20, 1, mib.one * kMiB, 1, any_but_last},
      {names.one_slice_double, 15, 1, mib.two * kMiB, 2, {0, 2, 4, 6}},
      {names.two_slices, 14, 2, mib.two * kMiB, 2, {0, 2, 4}},
      {names.three_slices, 9, 3, mib.four * kMiB, 4, {0, 4}},
      {names.four_slices, 5, 4, mib.four * kMiB, 4, {0}},
      {names.seven_slices, 0, 7, mib.eight * kMiB, 8, {0}},
  };
}

const std::vector<MigProfile>& A100With40Gb() {
  static const auto* table = new std::vector<MigProfile>(
      Table({"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"},
            {4864, 9984, 20096, 40448}));
  return *table;
}

const std::vector<MigProfile>& A100With80Gb() {
  static const auto* table = new std::vector<MigProfile>(
      Table({"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
            {9728, 19968, 40192, 80384}));
  return *table;
}

const std::vector<MigProfile>& H100With80Gb() {
  static const auto* table = new std::vector<MigProfile>(
      Table({"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
            {9984, 20096, 40448, 81152}));
  return *table;
}

const std::vector<MigProfile>& H200() {
  static const auto* table = new std::vector<MigProfile>(
      Table({"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"},
            {16384, 33024, 71168, 143104}));
  return *table;
}

// The words of a model name, upper case, without the vendor:
// "NVIDIA A100-SXM4-80GB" -> A100 SXM4 80GB.
std::vector<std::string> ModelWords(absl::string_view model) {
  std::string text = absl::AsciiStrToUpper(model);
  for (char& c : text) {
    if (c == '-' || c == '_') c = ' ';
  }
  std::vector<std::string> words = absl::StrSplit(text, ' ', absl::SkipEmpty());
  if (!words.empty() && words.front() == "NVIDIA") words.erase(words.begin());
  return words;
}

bool Has(const std::vector<std::string>& words, absl::string_view word) {
  for (const std::string& w : words) {
    if (w == word) return true;
  }
  return false;
}

// The memory the name states ("80GB"), or "" when it states none.
std::string StatedMemory(const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    if (w.size() > 2 && absl::EndsWith(w, "GB") && absl::ascii_isdigit(w.front())) return w;
  }
  return "";
}

}  // namespace

const std::vector<MigProfile>* KnownMigProfiles(absl::string_view model) {
  const std::vector<std::string> words = ModelWords(model);
  const std::string memory = StatedMemory(words);
  if (Has(words, "H200")) {
    // H200 SXM and H200 NVL both carry 141 GB and share the table.
    return memory.empty() || memory == "141GB" ? &H200() : nullptr;
  }
  if (Has(words, "H100")) {
    // H100 NVL (94 GB) names its profiles 1g.12gb, 3g.47gb, ...
    if (Has(words, "NVL")) return nullptr;
    return memory.empty() || memory == "80GB" ? &H100With80Gb() : nullptr;
  }
  if (Has(words, "A100")) {
    if (memory == "40GB") return &A100With40Gb();
    if (memory == "80GB") return &A100With80Gb();
    return nullptr;  // A bare A100 could be either.
  }
  return nullptr;
}

const MigProfile* FindProfile(const std::vector<MigProfile>& profiles, absl::string_view name) {
  name = absl::StripPrefix(name, "MIG ");
  for (const MigProfile& profile : profiles) {
    if (absl::EqualsIgnoreCase(profile.name, name)) return &profile;
  }
  return nullptr;
}

std::optional<int> ComputeSlicesOfName(const std::string& profile) {
  absl::string_view name = absl::StripPrefix(profile, "MIG ");
  size_t digits = 0;
  while (digits < name.size() && absl::ascii_isdigit(name[digits])) ++digits;
  if (digits == 0 || digits > 1 || digits >= name.size() || name[digits] != 'g') {
    return std::nullopt;
  }
  const int slices = name[0] - '0';
  if (slices < 1 || slices > kMigComputeSlices) return std::nullopt;
  return slices;
}

std::optional<int> ComputeSlicesOf(const MigInstance& instance, const GpuMig& mig) {
  if (const MigProfile* profile = FindProfile(mig.profiles, instance.profile)) {
    if (profile->compute_slices >= 1 && profile->compute_slices <= kMigComputeSlices) {
      return profile->compute_slices;
    }
  }
  return ComputeSlicesOfName(instance.profile);
}

int64_t LeastGpuSevenths(const WorkspaceClass& cls) {
  if (cls.is_gpu()) return int64_t{cls.gpu.count} * kMigComputeSlices;
  int least = 0;
  for (const std::string& profile : cls.gpu.mig_profiles) {
    const int slices = ComputeSlicesOfName(profile).value_or(1);
    least = least == 0 ? slices : std::min(least, slices);
  }
  return least;
}

}  // namespace wsched::core
