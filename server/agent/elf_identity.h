// What a shared library is built for, from its ELF header: the class (32- or
// 64-bit) and the machine. Multilib nodes (RHEL, Fedora, SUSE) keep 32-bit
// copies of the driver's libraries under the same names in /usr/lib and
// /usr/lib/nvidia; a container of the node's architecture can load only the
// 64-bit ones, so the CDI spec must never bind the others.
#ifndef WSCHED_SERVER_AGENT_ELF_IDENTITY_H_
#define WSCHED_SERVER_AGENT_ELF_IDENTITY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace wsched::agent {

// Bytes of the header that ReadElfIdentity needs (e_machine ends at 20).
inline constexpr size_t kElfIdentityBytes = 20;

struct ElfIdentity {
  int elf_class = 0;     // 1: 32-bit, 2: 64-bit (EI_CLASS).
  uint16_t machine = 0;  // e_machine: 62 x86-64, 183 AArch64, 3 i386, 40 ARM.

  bool operator==(const ElfIdentity&) const = default;
};

// nullopt when `head` does not start like an ELF file.
std::optional<ElfIdentity> ReadElfIdentity(absl::string_view head);

// The class and machine of the agent's own build: the node's, since the
// agent runs on the node it describes.
ElfIdentity NodeElfIdentity();

// "64-bit x86-64", "32-bit i386", "64-bit machine 21": for problems and logs.
std::string DescribeElf(const ElfIdentity& identity);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_ELF_IDENTITY_H_
