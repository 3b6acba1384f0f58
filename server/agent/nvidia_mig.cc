#include "server/agent/nvidia_mig.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/agent/nvidia_smi.h"

namespace wsched::agent {
namespace {

// Bounds on numbers nvidia-smi prints, so junk cannot become huge values.
constexpr int kMaxGpuIndex = 1023;
constexpr int kMaxMigId = 1023;  // Profile, GPU instance, compute instance and device IDs.
constexpr int64_t kMaxGib = 1 << 20;
constexpr int64_t kGib = int64_t{1} << 30;
// Linux minors are 20 bits.
constexpr int64_t kMaxDeviceMinor = (int64_t{1} << 20) - 1;
constexpr char kUnreachablePrefix[] = "Unable to determine the device handle for GPU";

absl::Status LineError(absl::string_view command, int line_number, absl::string_view line,
                       absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(command, " line ", line_number, ": ", problem,
                                                 " in \"", absl::StripAsciiWhitespace(line), "\""));
}

bool IsDigits(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

// A plain decimal number in [0, max]: no sign, no spaces.
bool ParseNumber(absl::string_view text, int max, int& out) {
  return IsDigits(text) && text.size() <= 9 && absl::SimpleAtoi(text, &out) && out <= max;
}

// "1g.18gb", "3g.71gb", "1g.18gb+me", "1g.24gb+me.all", "1g.12gb-me": the
// GPU's share of compute slices, its memory, and an optional variant. Returns
// the compute slices, or nullopt when the name is not of this form.
std::optional<int> GpuInstanceSlices(absl::string_view name) {
  size_t g = name.find('g');
  int slices = 0;
  if (g == absl::string_view::npos ||
      !ParseNumber(name.substr(0, g), core::kMigComputeSlices, slices) || slices < 1) {
    return std::nullopt;
  }
  absl::string_view rest = name.substr(g + 1);
  if (!absl::ConsumePrefix(&rest, ".")) return std::nullopt;
  size_t digits = 0;
  while (digits < rest.size() && absl::ascii_isdigit(rest[digits])) ++digits;
  if (digits == 0) return std::nullopt;
  rest.remove_prefix(digits);
  if (!absl::ConsumePrefix(&rest, "gb")) return std::nullopt;
  if (rest.empty()) return slices;
  if (rest.front() != '+' && rest.front() != '-') return std::nullopt;
  for (char c : rest.substr(1)) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '+' && c != '-') return std::nullopt;
  }
  return rest.size() > 1 ? std::optional<int>(slices) : std::nullopt;
}

// A compute instance profile that takes only part of its GPU instance:
// "1c.3g.71gb" (compute slices "c", then the GPU instance's own name).
bool IsPartialComputeProfile(absl::string_view name) {
  size_t c = name.find('c');
  return c != absl::string_view::npos && c > 0 && IsDigits(name.substr(0, c)) &&
         c + 1 < name.size() && name[c + 1] == '.';
}

bool IsValidComputeProfile(absl::string_view name) {
  if (IsPartialComputeProfile(name)) name = name.substr(name.find('.') + 1);
  return GpuInstanceSlices(name).has_value();
}

// "16.00" (GiB, as the Memory column prints it) in bytes, without floating
// point: the fraction is exact for the two decimals nvidia-smi prints.
bool ParseGib(absl::string_view text, int64_t& bytes) {
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(text, absl::MaxSplits('.', 1));
  int64_t whole = 0;
  if (!IsDigits(parts.first) || parts.first.size() > 9 || !absl::SimpleAtoi(parts.first, &whole) ||
      whole > kMaxGib) {
    return false;
  }
  bytes = whole * kGib;
  if (!absl::StrContains(text, '.')) return true;
  if (!IsDigits(parts.second) || parts.second.size() > 6) return false;
  int64_t fraction = 0, scale = 1;
  for (char c : parts.second) {
    fraction = fraction * 10 + (c - '0');
    scale *= 10;
  }
  bytes += fraction * kGib / scale;
  return true;
}

// The cells of a table line ("|   0  MIG 1g.18gb  19 ... |"); empty for a
// line that is not a table row (borders, messages).
std::vector<absl::string_view> RowCells(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  if (!absl::StartsWith(line, "|")) return {};
  return absl::StrSplit(line, absl::ByAnyChar(" \t|"), absl::SkipEmpty());
}

// A table's data rows: lines whose first cell is a number (the GPU column).
// Headers ("GPU   Name ...", "ID   ID   Start:Size") and "|====|" are not.
bool IsDataRow(const std::vector<absl::string_view>& cells) {
  return !cells.empty() && IsDigits(cells[0]);
}

// "4:4" -> start 4, size 4, inside the memory slots.
bool ParsePlacement(absl::string_view text, int& start, int& size) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  return parts.size() == 2 && ParseNumber(parts[0], core::kMigMemorySlots - 1, start) &&
         ParseNumber(parts[1], core::kMigMemorySlots, size) && size >= 1 &&
         start + size <= core::kMigMemorySlots;
}

absl::StatusOr<core::MigProfile> ParseProfileRow(int line_number, absl::string_view line,
                                                 const std::vector<absl::string_view>& cells,
                                                 int& gpu) {
  constexpr char kCommand[] = "nvidia-smi mig -lgip";
  // GPU, "MIG", name, ID, Instances Free/Total, Memory GiB, P2P, SM, ...
  if (cells.size() < 6) {
    return LineError(kCommand, line_number, line, "expected GPU, Name, ID, Instances, Memory");
  }
  if (!ParseNumber(cells[0], kMaxGpuIndex, gpu)) {
    return LineError(kCommand, line_number, line, absl::StrCat("GPU \"", cells[0], "\""));
  }
  core::MigProfile profile;
  std::optional<int> slices = GpuInstanceSlices(cells[2]);
  if (!slices) {
    return LineError(kCommand, line_number, line,
                     absl::StrCat("profile name \"", cells[2], "\" is not like 1g.18gb"));
  }
  profile.name = std::string(cells[2]);
  profile.compute_slices = *slices;
  if (!ParseNumber(cells[3], kMaxMigId, profile.id)) {
    return LineError(kCommand, line_number, line, absl::StrCat("profile ID \"", cells[3], "\""));
  }
  if (!absl::StrContains(cells[4], '/')) {
    return LineError(kCommand, line_number, line,
                     absl::StrCat("Instances \"", cells[4], "\" is not Free/Total"));
  }
  if (!ParseGib(cells[5], profile.memory_bytes)) {
    return LineError(kCommand, line_number, line,
                     absl::StrCat("Memory \"", cells[5], "\" is not GiB"));
  }
  return profile;
}

// "{0,2,4,6}:2" -> starts, size.
absl::StatusOr<MigPlacements> ParsePlacementSet(absl::string_view text) {
  absl::string_view list = text;
  if (!absl::ConsumePrefix(&list, "{")) return absl::InvalidArgumentError("expected {starts}:size");
  size_t close = list.find('}');
  if (close == absl::string_view::npos) return absl::InvalidArgumentError("no closing }");
  absl::string_view size_text = list.substr(close + 1);
  list = list.substr(0, close);
  MigPlacements placements;
  if (!absl::ConsumePrefix(&size_text, ":") ||
      !ParseNumber(size_text, core::kMigMemorySlots, placements.size) || placements.size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("size after } is not 1..", core::kMigMemorySlots));
  }
  if (list.empty()) return placements;
  for (absl::string_view start_text : absl::StrSplit(list, ',')) {
    int start = 0;
    start_text = absl::StripAsciiWhitespace(start_text);
    if (!ParseNumber(start_text, core::kMigMemorySlots - 1, start) ||
        start + placements.size > core::kMigMemorySlots) {
      return absl::InvalidArgumentError(absl::StrCat("start \"", start_text, "\" does not fit ",
                                                     placements.size, " of ", core::kMigMemorySlots,
                                                     " slots"));
    }
    if (!placements.starts.empty() && start <= placements.starts.back()) {
      return absl::InvalidArgumentError("starts are not ascending");
    }
    placements.starts.push_back(start);
  }
  return placements;
}

}  // namespace

absl::StatusOr<std::vector<MigModeLine>> ParseMigModeCsv(absl::string_view text) {
  constexpr char kCommand[] = "nvidia-smi --query-gpu=mig.mode";
  std::vector<MigModeLine> lines;
  std::set<int> indices;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, kUnreachablePrefix)) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    if (fields.size() != 4) {
      return LineError(
          kCommand, line_number, line,
          absl::StrCat("expected 4 fields (", kMigModeQuery, "), got ", fields.size()));
    }
    for (absl::string_view& field : fields) field = absl::StripAsciiWhitespace(field);
    MigModeLine mode;
    if (!ParseNumber(fields[0], kMaxGpuIndex, mode.index) || !indices.insert(mode.index).second) {
      return LineError(kCommand, line_number, line,
                       absl::StrCat("index \"", fields[0], "\" is not a new GPU index"));
    }
    absl::StatusOr<std::string> address = NormalizePciBusId(fields[1]);
    if (!address.ok()) return LineError(kCommand, line_number, line, address.status().message());
    mode.pci_address = *std::move(address);
    // "[N/A]" on a GPU without MIG; another bracketed value is a GPU error.
    auto bracketed = [](absl::string_view value) {
      return absl::StartsWith(value, "[") && absl::EndsWith(value, "]");
    };
    for (int i : {2, 3}) {
      if (!bracketed(fields[i]) && !absl::EqualsIgnoreCase(fields[i], "Enabled") &&
          !absl::EqualsIgnoreCase(fields[i], "Disabled")) {
        return LineError(kCommand, line_number, line,
                         absl::StrCat("MIG mode \"", fields[i], "\" is not Enabled or Disabled"));
      }
    }
    mode.reported = !bracketed(fields[2]);
    mode.enabled = absl::EqualsIgnoreCase(fields[2], "Enabled");
    mode.pending_enabled = mode.reported && absl::EqualsIgnoreCase(fields[3], "Enabled");
    lines.push_back(std::move(mode));
  }
  return lines;
}

absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> ParseMigProfileTable(
    absl::string_view text) {
  std::map<int, std::vector<core::MigProfile>> profiles;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    std::vector<absl::string_view> cells = RowCells(line);
    if (!IsDataRow(cells)) continue;
    if (cells.size() < 2 || cells[1] != "MIG") {
      // The second line of a profile: CE, JPEG, OFA counts.
      if (std::all_of(cells.begin(), cells.end(), IsDigits)) continue;
      return LineError("nvidia-smi mig -lgip", line_number, line,
                       "neither a profile row (GPU MIG <name> ...) nor its second line");
    }
    int gpu = 0;
    absl::StatusOr<core::MigProfile> profile = ParseProfileRow(line_number, line, cells, gpu);
    if (!profile.ok()) return profile.status();
    std::vector<core::MigProfile>& on_gpu = profiles[gpu];
    for (const core::MigProfile& seen : on_gpu) {
      if (seen.id == profile->id) {
        return LineError("nvidia-smi mig -lgip", line_number, line,
                         absl::StrCat("profile ID ", profile->id, " twice on GPU ", gpu));
      }
    }
    on_gpu.push_back(*std::move(profile));
  }
  return profiles;
}

absl::StatusOr<std::map<int, std::map<int, MigPlacements>>> ParseMigPlacements(
    absl::string_view text) {
  constexpr char kCommand[] = "nvidia-smi mig -lgipp";
  std::map<int, std::map<int, MigPlacements>> placements;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    // "No MIG-enabled devices found."
    if (line.empty() || absl::StartsWith(line, "No ")) continue;
    size_t keyword = line.find("Placement");
    if (keyword == absl::string_view::npos) {
      return LineError(kCommand, line_number, line, "no \"Placements:\"");
    }
    std::vector<absl::string_view> head =
        absl::StrSplit(line.substr(0, keyword), absl::ByAnyChar(" \t"), absl::SkipEmpty());
    int gpu = 0, id = 0;
    if (head.size() != 5 || head[0] != "GPU" || !ParseNumber(head[1], kMaxGpuIndex, gpu) ||
        head[2] != "Profile" || head[3] != "ID" || !ParseNumber(head[4], kMaxMigId, id)) {
      return LineError(kCommand, line_number, line, "expected GPU <n> Profile ID <id>");
    }
    absl::string_view rest = line.substr(keyword + strlen("Placement"));
    absl::ConsumePrefix(&rest, "s");
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (!absl::ConsumePrefix(&rest, ":")) {
      return LineError(kCommand, line_number, line, "no ':' after Placements");
    }
    absl::StatusOr<MigPlacements> set = ParsePlacementSet(absl::StripAsciiWhitespace(rest));
    if (!set.ok()) return LineError(kCommand, line_number, line, set.status().message());
    if (!placements[gpu].emplace(id, *std::move(set)).second) {
      return LineError(kCommand, line_number, line,
                       absl::StrCat("profile ID ", id, " twice on GPU ", gpu));
    }
  }
  return placements;
}

absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> ParseMigProfiles(
    absl::string_view lgip, absl::string_view lgipp) {
  absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> profiles =
      ParseMigProfileTable(lgip);
  if (!profiles.ok()) return profiles.status();
  absl::StatusOr<std::map<int, std::map<int, MigPlacements>>> placements =
      ParseMigPlacements(lgipp);
  if (!placements.ok()) return placements.status();
  for (auto& [gpu, on_gpu] : *profiles) {
    for (core::MigProfile& profile : on_gpu) {
      auto gpu_it = placements->find(gpu);
      const MigPlacements* placed = nullptr;
      if (gpu_it != placements->end()) {
        auto it = gpu_it->second.find(profile.id);
        if (it != gpu_it->second.end()) placed = &it->second;
      }
      if (placed == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("nvidia-smi mig -lgipp: no placements for profile ", profile.name, " (ID ",
                         profile.id, ") of GPU ", gpu));
      }
      profile.size = placed->size;
      profile.starts = placed->starts;
    }
  }
  return profiles;
}

absl::StatusOr<std::vector<MigGpuInstanceRow>> ParseMigGpuInstances(absl::string_view text) {
  constexpr char kCommand[] = "nvidia-smi mig -lgi";
  std::vector<MigGpuInstanceRow> rows;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    std::vector<absl::string_view> cells = RowCells(line);
    if (!IsDataRow(cells)) continue;
    // GPU, "MIG", name, Profile ID, Instance ID, Start:Size.
    MigGpuInstanceRow row;
    if (cells.size() < 6 || cells[1] != "MIG") {
      return LineError(kCommand, line_number, line,
                       "expected GPU, MIG <name>, Profile ID, Instance ID, Start:Size");
    }
    if (!ParseNumber(cells[0], kMaxGpuIndex, row.gpu)) {
      return LineError(kCommand, line_number, line, absl::StrCat("GPU \"", cells[0], "\""));
    }
    if (!GpuInstanceSlices(cells[2])) {
      return LineError(kCommand, line_number, line,
                       absl::StrCat("profile name \"", cells[2], "\" is not like 1g.18gb"));
    }
    row.profile = std::string(cells[2]);
    if (!ParseNumber(cells[3], kMaxMigId, row.profile_id) ||
        !ParseNumber(cells[4], kMaxMigId, row.id)) {
      return LineError(kCommand, line_number, line, "profile or instance ID is not a number");
    }
    if (!ParsePlacement(cells[5], row.start, row.size)) {
      return LineError(kCommand, line_number, line,
                       absl::StrCat("placement \"", cells[5], "\" is not Start:Size within ",
                                    core::kMigMemorySlots, " slots"));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::StatusOr<std::vector<MigComputeInstanceRow>> ParseMigComputeInstances(
    absl::string_view text) {
  constexpr char kCommand[] = "nvidia-smi mig -lci";
  std::vector<MigComputeInstanceRow> rows;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    std::vector<absl::string_view> cells = RowCells(line);
    if (!IsDataRow(cells)) continue;
    // GPU, GPU Instance ID, "MIG", name, Profile ID, Instance ID[, Start:Size].
    MigComputeInstanceRow row;
    if (cells.size() < 6 || cells[2] != "MIG") {
      return LineError(kCommand, line_number, line,
                       "expected GPU, GPU Instance ID, MIG <name>, Profile ID, Instance ID");
    }
    if (!ParseNumber(cells[0], kMaxGpuIndex, row.gpu) ||
        !ParseNumber(cells[1], kMaxMigId, row.gpu_instance)) {
      return LineError(kCommand, line_number, line, "GPU or GPU instance ID is not a number");
    }
    if (!IsValidComputeProfile(cells[3])) {
      return LineError(
          kCommand, line_number, line,
          absl::StrCat("profile name \"", cells[3], "\" is not like 3g.71gb or 1c.3g.71gb"));
    }
    row.profile = std::string(cells[3]);
    if (!ParseNumber(cells[4], kMaxMigId, row.profile_id) ||
        !ParseNumber(cells[5], kMaxMigId, row.id)) {
      return LineError(kCommand, line_number, line, "profile or instance ID is not a number");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::StatusOr<std::map<int, std::vector<core::MigInstance>>> PairMigInstances(
    const std::vector<MigGpuInstanceRow>& gpu_instances,
    const std::vector<MigComputeInstanceRow>& compute_instances) {
  std::map<int, std::map<int, core::MigInstance>> by_gpu;
  std::map<int, unsigned> taken_slots;  // Per GPU, a bit per memory slot.
  for (const MigGpuInstanceRow& row : gpu_instances) {
    const unsigned slots = ((1u << row.size) - 1) << row.start;
    if (taken_slots[row.gpu] & slots) {
      return absl::InvalidArgumentError(absl::StrCat("nvidia-smi mig -lgi: GPU instance ", row.id,
                                                     " of GPU ", row.gpu, " at ", row.start, ":",
                                                     row.size, " overlaps another"));
    }
    taken_slots[row.gpu] |= slots;
    core::MigInstance instance{
        .profile = row.profile, .gpu_instance = row.id, .start = row.start, .size = row.size};
    if (!by_gpu[row.gpu].emplace(row.id, std::move(instance)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("nvidia-smi mig -lgi: GPU instance ", row.id, " twice on GPU ", row.gpu));
    }
  }
  // Per GPU instance, its compute instances.
  std::map<std::pair<int, int>, std::vector<const MigComputeInstanceRow*>> children;
  for (const MigComputeInstanceRow& row : compute_instances) {
    auto gpu = by_gpu.find(row.gpu);
    if (gpu == by_gpu.end() || gpu->second.count(row.gpu_instance) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("nvidia-smi mig -lci: compute instance ", row.id, " of GPU instance ",
                       row.gpu_instance, " on GPU ", row.gpu, ", which -lgi does not list"));
    }
    std::vector<const MigComputeInstanceRow*>& siblings = children[{row.gpu, row.gpu_instance}];
    for (const MigComputeInstanceRow* sibling : siblings) {
      if (sibling->id == row.id) {
        return absl::InvalidArgumentError(absl::StrCat("nvidia-smi mig -lci: compute instance ",
                                                       row.id, " twice in GPU instance ",
                                                       row.gpu_instance, " on GPU ", row.gpu));
      }
    }
    siblings.push_back(&row);
  }
  std::map<int, std::vector<core::MigInstance>> instances;
  for (auto& [gpu, by_id] : by_gpu) {
    std::vector<core::MigInstance>& out = instances[gpu];
    for (auto& [id, instance] : by_id) {
      const std::vector<const MigComputeInstanceRow*>& cis = children[{gpu, id}];
      // Only one compute instance, and one with the whole GPU instance's
      // compute, is a slice one workspace can use.
      if (cis.size() == 1 && !IsPartialComputeProfile(cis[0]->profile)) {
        instance.compute_instance = cis[0]->id;
      }
      out.push_back(std::move(instance));
    }
  }
  return instances;
}

absl::StatusOr<std::vector<MigDeviceUuid>> ParseMigDeviceList(absl::string_view text) {
  constexpr char kCommand[] = "nvidia-smi -L";
  std::vector<MigDeviceUuid> devices;
  std::optional<int> gpu;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    absl::string_view content = absl::StripAsciiWhitespace(line);
    if (content.empty() || absl::StartsWith(content, kUnreachablePrefix)) continue;
    if (absl::ConsumePrefix(&content, "GPU ")) {
      // "GPU 0: NVIDIA H200 (UUID: GPU-...)"
      int index = 0;
      if (!ParseNumber(content.substr(0, content.find(':')), kMaxGpuIndex, index) ||
          !absl::StrContains(content, ':')) {
        return LineError(kCommand, line_number, line, "expected GPU <index>: <name> (UUID: ...)");
      }
      gpu = index;
      continue;
    }
    if (!absl::ConsumePrefix(&content, "MIG ")) {
      return LineError(kCommand, line_number, line, "neither a GPU nor a MIG device line");
    }
    if (!gpu) return LineError(kCommand, line_number, line, "MIG device before any GPU line");
    // "1g.18gb     Device  0: (UUID: MIG-...)"
    size_t device_at = content.find(" Device ");
    if (device_at == absl::string_view::npos) {
      return LineError(kCommand, line_number, line, "no \"Device <index>:\"");
    }
    MigDeviceUuid device{.gpu = *gpu};
    device.profile = std::string(absl::StripAsciiWhitespace(content.substr(0, device_at)));
    if (!IsValidComputeProfile(device.profile)) {
      return LineError(kCommand, line_number, line,
                       absl::StrCat("profile \"", device.profile, "\" is not like 1g.18gb"));
    }
    absl::string_view rest =
        absl::StripLeadingAsciiWhitespace(content.substr(device_at + strlen(" Device ")));
    size_t colon = rest.find(':');
    if (colon == absl::string_view::npos ||
        !ParseNumber(rest.substr(0, colon), kMaxMigId, device.device)) {
      return LineError(kCommand, line_number, line, "device index is not a number");
    }
    rest = absl::StripAsciiWhitespace(rest.substr(colon + 1));
    if (!absl::ConsumePrefix(&rest, "(UUID:") || !absl::ConsumeSuffix(&rest, ")")) {
      return LineError(kCommand, line_number, line, "no (UUID: MIG-...)");
    }
    rest = absl::StripAsciiWhitespace(rest);
    if (!absl::StartsWith(rest, "MIG-") || rest.size() == 4 ||
        std::any_of(rest.begin(), rest.end(), [](char c) { return !absl::ascii_isgraph(c); })) {
      return LineError(kCommand, line_number, line,
                       absl::StrCat("UUID \"", rest, "\" is not MIG-..."));
    }
    device.uuid = std::string(rest);
    devices.push_back(std::move(device));
  }
  return devices;
}

namespace {

// One "MIG Device" block of `nvidia-smi -q` being read.
struct QueryBlock {
  int line_number = 0;
  size_t indent = 0;
  MigDeviceIds ids;
  bool has_index = false, has_gpu_instance = false, has_compute_instance = false;
};

size_t Indent(absl::string_view line) {
  size_t indent = 0;
  while (indent < line.size() && (line[indent] == ' ' || line[indent] == '\t')) ++indent;
  return indent;
}

// "Index : 0" inside a block: sets the field it names; false for a value
// that is not a number. Other keys (device attributes, memory) are skipped.
bool ReadBlockField(absl::string_view content, QueryBlock& block) {
  std::pair<absl::string_view, absl::string_view> key_value =
      absl::StrSplit(content, absl::MaxSplits(':', 1));
  absl::string_view key = absl::StripAsciiWhitespace(key_value.first);
  absl::string_view value = absl::StripAsciiWhitespace(key_value.second);
  const struct {
    const char* key;
    int* out;
    bool* seen;
  } fields[] = {{"Index", &block.ids.device, &block.has_index},
                {"GPU Instance ID", &block.ids.gpu_instance, &block.has_gpu_instance},
                {"Compute Instance ID", &block.ids.compute_instance, &block.has_compute_instance}};
  for (const auto& field : fields) {
    if (!absl::EqualsIgnoreCase(key, field.key)) continue;
    *field.seen = true;
    return ParseNumber(value, kMaxMigId, *field.out);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<MigDeviceIds>> ParseMigDeviceQuery(absl::string_view text) {
  constexpr char kCommand[] = "nvidia-smi -q";
  std::vector<MigDeviceIds> devices;
  std::optional<std::string> gpu;  // The current GPU's PCI address.
  std::optional<QueryBlock> block;
  auto finish = [&]() -> absl::Status {
    if (!block) return absl::OkStatus();
    if (!block->has_index || !block->has_gpu_instance || !block->has_compute_instance) {
      return absl::InvalidArgumentError(
          absl::StrCat(kCommand, " line ", block->line_number,
                       ": a MIG Device without Index, GPU Instance ID and Compute Instance ID"));
    }
    devices.push_back(block->ids);
    block.reset();
    return absl::OkStatus();
  };
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    absl::string_view content = absl::StripAsciiWhitespace(line);
    if (content.empty()) continue;
    const size_t indent = Indent(line);
    if (block && indent <= block->indent) {
      if (absl::Status status = finish(); !status.ok()) return status;
    }
    if (indent == 0 && absl::StartsWith(content, "GPU ")) {
      // "GPU 00000000:3B:00.0" opens a GPU's section.
      absl::StatusOr<std::string> address =
          NormalizePciBusId(absl::StripAsciiWhitespace(content.substr(4)));
      if (!address.ok()) return LineError(kCommand, line_number, line, address.status().message());
      gpu = *std::move(address);
      continue;
    }
    if (content == "MIG Device") {
      if (!gpu) return LineError(kCommand, line_number, line, "MIG Device before any GPU section");
      block = QueryBlock{.line_number = line_number, .indent = indent};
      block->ids.pci_address = *gpu;
      continue;
    }
    if (block && !ReadBlockField(content, *block)) {
      return LineError(kCommand, line_number, line, "not a number");
    }
  }
  if (absl::Status status = finish(); !status.ok()) return status;
  return devices;
}

std::string MigCapabilityPath(int device_minor, int gpu_instance,
                              std::optional<int> compute_instance) {
  return absl::StrCat("/proc/driver/nvidia/capabilities/gpu", device_minor, "/mig/gi", gpu_instance,
                      compute_instance ? absl::StrCat("/ci", *compute_instance) : std::string(),
                      "/access");
}

absl::StatusOr<int64_t> ParseCapabilityMinor(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::pair<absl::string_view, absl::string_view> key_value =
        absl::StrSplit(line, absl::MaxSplits(':', 1));
    if (absl::StripAsciiWhitespace(key_value.first) != "DeviceFileMinor") continue;
    absl::string_view value = absl::StripAsciiWhitespace(key_value.second);
    int64_t minor = 0;
    if (!IsDigits(value) || value.size() > 9 || !absl::SimpleAtoi(value, &minor) ||
        minor > kMaxDeviceMinor) {
      return absl::InvalidArgumentError(
          absl::StrCat("DeviceFileMinor \"", value, "\" is not a device minor"));
    }
    return minor;
  }
  return absl::InvalidArgumentError("no DeviceFileMinor line");
}

core::DeviceNode CapabilityDeviceNode(int64_t caps_major, int64_t minor) {
  return core::DeviceNode{.path = absl::StrCat("/dev/nvidia-caps/nvidia-cap", minor),
                          .type = 'c',
                          .major = caps_major,
                          .minor = minor};
}

bool IsUsableSlice(const core::MigInstance& instance) {
  return instance.compute_instance >= 0 && instance.gi_access.has_value() &&
         instance.ci_access.has_value();
}

}  // namespace wsched::agent
