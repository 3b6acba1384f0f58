#include "server/agent/elf_identity.h"

#include "absl/strings/str_cat.h"

namespace wsched::agent {
namespace {

constexpr int kElfClass32 = 1;
constexpr int kElfClass64 = 2;
constexpr int kElfDataLittle = 1;
constexpr int kElfDataBig = 2;
constexpr uint16_t kMachineI386 = 3;
constexpr uint16_t kMachineArm = 40;
constexpr uint16_t kMachineX8664 = 62;
constexpr uint16_t kMachineAarch64 = 183;
constexpr uint16_t kMachinePpc64 = 21;

}  // namespace

std::optional<ElfIdentity> ReadElfIdentity(absl::string_view head) {
  if (head.size() < kElfIdentityBytes || head.substr(0, 4) != "\x7f" "ELF") return std::nullopt;
  int elf_class = static_cast<unsigned char>(head[4]);
  int data = static_cast<unsigned char>(head[5]);
  if (elf_class != kElfClass32 && elf_class != kElfClass64) return std::nullopt;
  if (data != kElfDataLittle && data != kElfDataBig) return std::nullopt;
  // e_machine sits at offset 18 in both classes, in the file's byte order.
  auto low = static_cast<unsigned char>(head[data == kElfDataLittle ? 18 : 19]);
  auto high = static_cast<unsigned char>(head[data == kElfDataLittle ? 19 : 18]);
  return ElfIdentity{elf_class, static_cast<uint16_t>(high << 8 | low)};
}

ElfIdentity NodeElfIdentity() {
#if defined(__x86_64__)
  return {kElfClass64, kMachineX8664};
#elif defined(__aarch64__)
  return {kElfClass64, kMachineAarch64};
#elif defined(__powerpc64__)
  return {kElfClass64, kMachinePpc64};
#else
#error "wsched-agent knows the ELF machine of x86-64, AArch64 and ppc64 builds only"
#endif
}

std::string DescribeElf(const ElfIdentity& identity) {
  std::string bits = identity.elf_class == kElfClass64 ? "64-bit" : "32-bit";
  switch (identity.machine) {
    case kMachineX8664: return absl::StrCat(bits, " x86-64");
    case kMachineAarch64: return absl::StrCat(bits, " AArch64");
    case kMachineI386: return absl::StrCat(bits, " i386");
    case kMachineArm: return absl::StrCat(bits, " ARM");
    case kMachinePpc64: return absl::StrCat(bits, " ppc64");
    default: return absl::StrCat(bits, " machine ", identity.machine);
  }
}

}  // namespace wsched::agent
